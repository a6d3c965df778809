/* bindshim.c - libtybind.so, preloaded into every container process.
 *
 * Pods share the host's network stack; each has its own loopback address
 * (TY_POD_IP, 127.b.c.d). A server that binds the wildcard address (PyTorch's
 * TCPStore does, on [::] and 0.0.0.0) would take the port on every address
 * and collide with the same server of another job. This bind(2) moves a
 * wildcard bind to the pod's address: 0.0.0.0 -> TY_POD_IP, and [::] -> the
 * v4-mapped ::ffff:TY_POD_IP with IPV6_V6ONLY cleared so IPv4 clients reach
 * it. A wildcard bind to port 0 is left alone: a kernel-chosen port cannot
 * collide. Everything else goes to the real bind unchanged. Programs that do not
 * call bind through the C library (static binaries, raw syscalls, Go) are not
 * affected. Built without sanitizers: it runs inside arbitrary programs.
 *
 * connect(2) gives an unbound socket that dials a loopback address the pod's
 * address as its source, as a real pod's traffic carries the pod IP.
 * Rendezvous services that tell peers "connect to whoever connected to me"
 * (XGBoost's Rabit tracker, Gloo's store-based exchange) then hand out the pod
 * address, where the peer's wildcard listener actually is. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static bind_fn real_bind(void)
{
    static bind_fn fn;
    if (!fn)
        fn = (bind_fn)dlsym(RTLD_NEXT, "bind");
    return fn;
}

static int pod_ip(struct in_addr *out)
{
    const char *ip = getenv("TY_POD_IP");
    return ip && *ip && inet_pton(AF_INET, ip, out) == 1 ? 0 : -1;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    bind_fn next = real_bind();
    struct in_addr ip;

    if (!next)
        return -1;
    if (!addr || pod_ip(&ip) < 0)
        return next(fd, addr, len);
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, addr, sizeof(a));
        /* Port 0 asks the kernel for a free port, which cannot collide; MPI's
         * daemons bind so and advertise every interface's address. */
        if (a.sin_addr.s_addr != htonl(INADDR_ANY) || a.sin_port == 0)
            return next(fd, addr, len);
        a.sin_addr = ip;
        return next(fd, (const struct sockaddr *)&a, sizeof(a));
    }
    if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        int off = 0;
        memcpy(&a, addr, sizeof(a));
        if (memcmp(&a.sin6_addr, &in6addr_any, sizeof(a.sin6_addr)) != 0 || a.sin6_port == 0)
            return next(fd, addr, len);
        /* A v4-mapped address needs a dual-stack socket. */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
        memset(&a.sin6_addr, 0, sizeof(a.sin6_addr));
        a.sin6_addr.s6_addr[10] = 0xff;
        a.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&a.sin6_addr.s6_addr[12], &ip, 4);
        return next(fd, (const struct sockaddr *)&a, sizeof(a));
    }
    return next(fd, addr, len);
}

static connect_fn real_connect(void)
{
    static connect_fn fn;
    if (!fn)
        fn = (connect_fn)dlsym(RTLD_NEXT, "connect");
    return fn;
}

/* True when fd has no local address yet (bind or an earlier connect gives one). */
static int unbound(int fd, int family)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 || ss.ss_family != family)
        return 0;
    if (family == AF_INET)
        return ((struct sockaddr_in *)&ss)->sin_port == 0;
    return ((struct sockaddr_in6 *)&ss)->sin6_port == 0;
}

static int is_v4_loopback(const struct in_addr *a)
{
    return (ntohl(a->s_addr) >> 24) == 127;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    connect_fn next = real_connect();
    bind_fn rbind = real_bind();
    struct in_addr ip;

    if (!next)
        return -1;
    if (!addr || !rbind || pod_ip(&ip) < 0)
        return next(fd, addr, len);
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in dst, src = {.sin_family = AF_INET, .sin_addr = ip};
        memcpy(&dst, addr, sizeof(dst));
        /* A failed source bind is harmless: the connect goes out as before. */
        if (is_v4_loopback(&dst.sin_addr) && unbound(fd, AF_INET))
            rbind(fd, (const struct sockaddr *)&src, sizeof(src));
    } else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 dst, src = {.sin6_family = AF_INET6};
        struct in_addr v4;
        memcpy(&dst, addr, sizeof(dst));
        memcpy(&v4, &dst.sin6_addr.s6_addr[12], 4);
        if (IN6_IS_ADDR_V4MAPPED(&dst.sin6_addr) && is_v4_loopback(&v4) &&
            unbound(fd, AF_INET6)) {
            src.sin6_addr.s6_addr[10] = 0xff;
            src.sin6_addr.s6_addr[11] = 0xff;
            memcpy(&src.sin6_addr.s6_addr[12], &ip, 4);
            rbind(fd, (const struct sockaddr *)&src, sizeof(src));
        }
    }
    return next(fd, addr, len);
}
