/* gskconnect: a TLS CLIENT on IBM GSKit 8's SSL API (libgsk8ssl_64), for the runbook's checks of the web server
 * plug-in's TLS leg from IBM HTTP Server to the application server.
 *
 * It knows no plugin-cfg.xml: checks/standins/ihs/plugin_transport.py reads the <Transport> fragment (host, port, keyring,
 * stashfile), maps it to GSKit attributes (the one place where that mapping lives) and passes them here:
 *
 *     gskconnect HOST PORT COUNT b:ID=TEXT | e:ID=NUMBER | n:ID=NUMBER | s:ID=TEXT ...
 *
 * b: gsk_attribute_set_buffer, e: gsk_attribute_set_enum, n: gsk_attribute_set_numeric_value, all on ONE
 * environment (GSK_SESSION_TYPE = GSK_CLIENT_SESSION) before gsk_environment_init, as a plug-in process keeps one
 * environment per key database; s: gsk_attribute_set_buffer on each connection's socket handle before its
 * handshake (GSK_PEER_ID: the name under which GSKit's client keeps and looks up the session it may resume). Then it opens COUNT connections to HOST:PORT one after another, each a new TCP
 * connection and a new GSKit socket from that environment (gsk_secure_soc_init runs the handshake, validating the
 * server's certificate against the key database's signers), sends "GET / HTTP/1.0", reads the answer and closes.
 * For each connection it prints one line:
 *
 *     connection N: 0 protocol=P cipher=NAME resumed=yes|no
 *     connection N: RC NAME                 (the handshake failed: gsk_strerror's name)
 *
 * P is GSK_PROTOCOL_USED's answer, resumed is GSK_SID_FIRST (GSK_SID_NOT_FIRST: an abbreviated handshake that
 * resumed a session of an earlier connection). On a failed gsk_environment_init it prints
 * "gsk_environment_init: RC NAME" and exits 2; it exits 1 when any handshake failed, else 0.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

typedef void *gsk_handle;
extern int gsk_environment_open(gsk_handle *env);
extern int gsk_environment_init(gsk_handle env);
extern int gsk_environment_close(gsk_handle *env);
extern int gsk_attribute_set_buffer(gsk_handle h, int id, const char *buf, int len);
extern int gsk_attribute_set_enum(gsk_handle h, int id, int value);
extern int gsk_attribute_set_numeric_value(gsk_handle h, int id, int value);
extern int gsk_attribute_get_buffer(gsk_handle h, int id, const char **buf, int *len);
extern int gsk_attribute_get_enum(gsk_handle h, int id, int *value);
extern int gsk_secure_soc_open(gsk_handle env, gsk_handle *soc);
extern int gsk_secure_soc_init(gsk_handle soc);
extern int gsk_secure_soc_read(gsk_handle soc, char *buf, int size, int *got);
extern int gsk_secure_soc_write(gsk_handle soc, char *buf, int size, int *sent);
extern int gsk_secure_soc_close(gsk_handle *soc);
extern const char *gsk_strerror(int rc);

/* the identifiers this file uses itself (values: facts/ihs/gskit-attributes.csv) */
#define GSK_FD 300
#define GSK_SESSION_TYPE 402
#define GSK_CLIENT_SESSION 507
#define GSK_CONNECT_CIPHER_SPEC_EX 244
#define GSK_PROTOCOL_USED 405
#define GSK_SID_FIRST 406
#define GSK_SID_NOT_FIRST 517

static const char *per_socket[32];
static int sockets = 0;

static int set(gsk_handle env, const char *arg) {
    char kind = arg[0];
    if (kind == 's' && arg[1] == ':' && strchr(arg, '=') && sockets < 32) {
        per_socket[sockets++] = arg;
        return 0;
    }
    const char *eq = strchr(arg, '=');
    if (!eq || arg[1] != ':' || (kind != 'b' && kind != 'e' && kind != 'n')) {
        fprintf(stderr, "gskconnect: not an attribute: %s\n", arg);
        return -1;
    }
    int id = atoi(arg + 2);
    const char *value = eq + 1;
    int rc = kind == 'b' ? gsk_attribute_set_buffer(env, id, value, 0)
           : kind == 'e' ? gsk_attribute_set_enum(env, id, atoi(value))
                         : gsk_attribute_set_numeric_value(env, id, atoi(value));
    if (rc != 0) {
        printf("gsk_attribute_set %d: %d %s\n", id, rc, gsk_strerror(rc));
        return -1;
    }
    return 0;
}

static int dial(const char *host, const char *port) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "gskconnect: %s: %s\n", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        struct timeval wait = {.tv_sec = 30};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) perror("gskconnect: connect");
    return fd;
}

static int one(gsk_handle env, int n, const char *host, const char *port) {
    int fd = dial(host, port);
    if (fd < 0) {
        printf("connection %d: no TCP connection to %s:%s\n", n, host, port);
        return -1;
    }
    gsk_handle soc = NULL;
    int rc = gsk_secure_soc_open(env, &soc);
    if (rc == 0) rc = gsk_attribute_set_numeric_value(soc, GSK_FD, fd);
    for (int i = 0; rc == 0 && i < sockets; i++) {
        rc = gsk_attribute_set_buffer(soc, atoi(per_socket[i] + 2), strchr(per_socket[i], '=') + 1, 0);
        if (rc != 0) printf("gsk_attribute_set %d on the socket: %d %s\n", atoi(per_socket[i] + 2), rc, gsk_strerror(rc));
    }
    if (rc == 0) rc = gsk_secure_soc_init(soc);
    if (rc != 0) {
        printf("connection %d: %d %s\n", n, rc, gsk_strerror(rc));
        if (soc) gsk_secure_soc_close(&soc);
        close(fd);
        return -1;
    }
    const char *cipher = "?";
    int clen = 0, protocol = 0, first = 0;
    gsk_attribute_get_buffer(soc, GSK_CONNECT_CIPHER_SPEC_EX, &cipher, &clen);
    gsk_attribute_get_enum(soc, GSK_PROTOCOL_USED, &protocol);
    gsk_attribute_get_enum(soc, GSK_SID_FIRST, &first);
    char line[160];
    snprintf(line, sizeof line, "connection %d: 0 protocol=%d cipher=%.*s resumed=%s", n, protocol, clen, cipher,
             first == GSK_SID_NOT_FIRST ? "yes" : "no");
    char request[256];
    int len = snprintf(request, sizeof request, "GET / HTTP/1.0\r\nHost: %s:%s\r\n\r\n", host, port), sent = 0;
    gsk_secure_soc_write(soc, request, len, &sent);
    char answer[4096];
    int got = 0, total = 0;
    while (gsk_secure_soc_read(soc, answer, sizeof answer, &got) == 0 && got > 0) total += got;
    printf("%s answer=%d bytes\n", line, total);
    gsk_secure_soc_close(&soc);
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: gskconnect HOST PORT COUNT b:ID=TEXT|e:ID=N|n:ID=N|s:ID=TEXT ...\n");
        return 64;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    gsk_handle env = NULL;
    int rc = gsk_environment_open(&env);
    if (rc != 0) {
        printf("gsk_environment_open: %d %s\n", rc, gsk_strerror(rc));
        return 2;
    }
    if (gsk_attribute_set_enum(env, GSK_SESSION_TYPE, GSK_CLIENT_SESSION) != 0) return 2;
    for (int i = 4; i < argc; i++)
        if (set(env, argv[i]) != 0) return 2;
    rc = gsk_environment_init(env);
    if (rc != 0) {
        printf("gsk_environment_init: %d %s\n", rc, gsk_strerror(rc));
        return 2;
    }
    int failed = 0;
    for (int n = 1, count = atoi(argv[3]); n <= count; n++)
        if (one(env, n, argv[1], argv[2]) != 0) failed = 1;
    gsk_environment_close(&env);
    return failed;
}
