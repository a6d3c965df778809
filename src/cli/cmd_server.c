/* cmd_server.c - `trainyard server`: the embedded control plane. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "cli/cli.h"
#include "controller/gc.h"
#include "server/server.h"
#include "store/store.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void server_usage(FILE *f)
{
    fprintf(f, "usage: trainyard server [--address ADDR] [--port PORT] [--data-dir DIR]\n"
               "                        [--log-level debug|info|warn|error]\n"
               "  --address    IPv4 address to listen on (default 127.0.0.1)\n"
               "  --port       TCP port (default %d; 0 picks a free one and prints it)\n"
               "  --data-dir   where the database and logs live\n"
               "               (default $TRAINYARD_DATA_DIR or ~/.local/share/trainyard)\n"
               "  --log-level  default info\n",
               TY_DEFAULT_PORT);
}

static void default_data_dir(char *buf, size_t len)
{
    const char *env = getenv("TRAINYARD_DATA_DIR");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/trainyard", xdg);
    else
        snprintf(buf, len, "%s/.local/share/trainyard", home && *home ? home : ".");
}

int cmd_server(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"address", required_argument, NULL, 'a'}, {"port", required_argument, NULL, 'p'},
        {"data-dir", required_argument, NULL, 'd'}, {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    server_opts so = {.address = "127.0.0.1", .port = TY_DEFAULT_PORT};
    char data_dir[4096];
    ty_error err;
    ty_store *store;
    ty_gc *gc;
    ty_server *srv;
    int c;

    default_data_dir(data_dir, sizeof(data_dir));
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            so.address = optarg;
            break;
        case 'p': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 65535) {
                fprintf(stderr, "error: invalid --port %s: want 0-65535\n", optarg);
                return 2;
            }
            so.port = (uint16_t)v;
            break;
        }
        case 'd':
            snprintf(data_dir, sizeof(data_dir), "%s", optarg);
            break;
        case 'l': {
            ty_log_level lvl;
            if (ty_log_parse_level(optarg, &lvl) < 0) {
                fprintf(stderr, "error: invalid --log-level %s: want debug, info, warn or error\n",
                        optarg);
                return 2;
            }
            ty_log_set_level(lvl);
            break;
        }
        case 'h':
            server_usage(stdout);
            return 0;
        default:
            server_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument %s\n", argv[optind]);
        server_usage(stderr);
        return 2;
    }
    so.data_dir = data_dir;
    ty_error_init(&err);
    store = store_open(data_dir, &err);
    if (!store) {
        fprintf(stderr, "error: cannot open the store in %s: %s\n", data_dir, err.text);
        ty_error_clear(&err);
        return 1;
    }
    gc = gc_start(store, &err);
    if (!gc) {
        fprintf(stderr, "error: cannot start the garbage collector: %s\n", err.text);
        store_close(store);
        ty_error_clear(&err);
        return 1;
    }
    srv = server_start(store, &so, &err);
    if (!srv) {
        fprintf(stderr, "error: %s\n", err.text);
        gc_stop(gc);
        store_close(store);
        ty_error_clear(&err);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    ty_info("trainyard server listening on http://%s:%u (data dir %s)", so.address,
            (unsigned)server_port(srv), data_dir);
    /* Scripts that start the server with --port 0 read the port from here. */
    printf("listening on http://%s:%u\n", so.address, (unsigned)server_port(srv));
    fflush(stdout);
    while (!stop_requested)
        pause();
    ty_info("shutting down");
    server_stop(srv);
    gc_stop(gc);
    store_close(store);
    return 0;
}
