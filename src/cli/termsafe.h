/* termsafe.h - what the CLI prints, made safe for a terminal. Names, status
 * messages, progress metrics and records come from the server, and anyone
 * who may write them (a training script posting its progress, a tenant)
 * could otherwise send escape sequences to the terminal of whoever reads
 * them: clear the screen, set the title, fake or hide lines
 * (CVE-2021-25743 was kubectl's). As kubectl's printers do, ESC prints as
 * "^[" and CR as "\r"; the other C0 controls but newline and tab, DEL and
 * the C1 controls (U+0080..U+009F, which some terminals take as ESC
 * sequences) are escaped too. Pod logs are the program's own bytes and
 * stay raw (`trainyard logs`, as `kubectl logs`). */
#ifndef TY_CLI_TERMSAFE_H
#define TY_CLI_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* The escaped form of n bytes of s, written with put(ctx, bytes, len); a
 * multi-byte control split across calls is carried in *carry (0 at the
 * start; pass the same one to each call, then flush it with n 0). */
void cli_term_escape(const char *s, size_t n, unsigned char *carry,
                     void (*put)(void *ctx, const char *b, size_t len), void *ctx);

/* Replaces stdout and stderr with streams that escape what they print
 * onto fds 1 and 2, buffered as they were. 0, or -1 (the streams are left
 * as they were). */
int cli_term_safe_stdio(void);

/* Writes the program's own control sequence seq (a colour) to f as it is:
 * through a safe stream's fd, after what the stream holds. */
void cli_term_raw(FILE *f, const char *seq);

/* The fd f writes to at last (through a safe stream: its fd), -1 when
 * none. */
int cli_term_fd(FILE *f);

#endif
