/* gskserve: a TLS server on IBM GSKit 8's SSL API (libgsk8ssl_64), for the runbook's checks.
 *
 * It knows no IHS directive: checks/standins/ihs/gskit_server.py reads the mod_ibm_ssl directives, maps them to
 * GSKit attributes (the one place where that mapping lives) and passes them here as arguments:
 *
 *     gskserve PORT b:ID=TEXT | b:ID=@ENVNAME | b:ID=%STASHFILE | e:ID=NUMBER | n:ID=NUMBER ...
 *     gskserve --stash KEYDB        (the password in GSKSERVE_KEYDB_PW)
 *     gskserve --create-kdb KEYDB [SIGNER.der]   (the same; a new CMS key database, then its stash)
 *     gskserve --token-request MODULE TOKEN LABEL CN CSRFILE    (the token's PIN in GSKSERVE_TOKEN_PIN)
 *     gskserve --token-receive MODULE TOKEN CERT.der            (the same)
 *     gskserve --token-labels MODULE TOKEN                      (the same)
 *     gskserve --token-delete MODULE TOKEN LABEL                (the same)
 *
 * b: gsk_attribute_set_buffer, e: gsk_attribute_set_enum, n: gsk_attribute_set_numeric_value, all on the
 * environment before gsk_environment_init. "@ENVNAME" reads the value from the environment variable ENVNAME and
 * "%STASHFILE" from a stash file in sslstash's form (each byte XOR 0xF5, ended by a byte that gives 0), as
 * mod_ibm_ssl reads SSLStashfile: a password or PIN never appears in a process listing. The numbers are GSKit's
 * attribute identifiers; gskit_server.py names each (facts/ihs/gskit-attributes.csv says where each comes from).
 *
 * --stash writes KEYDB's stash file (KEYDB with .sth) with GSKit's own key management library, libgsk8km_64
 * (GSKKM_Init, then GSKKM_StashKeyDbPwd(file, password): IBM publishes no header for it; the two-string form is
 * what this library accepts, and GSKit's SSL library opens the key database with the file it writes).
 * --create-kdb first makes KEYDB a new CMS key database (GSKKM_CreateNewKeyDb(file, password, 0 for no password
 * expiry, &handle), stores SIGNER.der (a DER certificate) as the signer "signer" with GSKKM_StoreCACert(handle,
 * der, length, label), then GSKKM_CloseKeyDb; again not published prototypes, but what the library accepts: it
 * writes KEYDB with its .rdb and .crl files, and GSKit's SSL library opens it and validates with the signer).
 *
 * The --token-* modes are what gskcapicmd's -certreq -create -crypto and -cert -receive -crypto do, through the same
 * key management library on an opened PKCS #11 token (issue 44, item 1). IBM publishes no header for these either; each
 * argument list below was read from libgsk8km_64.so's machine code (objdump -d) and then proved on the amd64 host by
 * its result, checked with tools that are not GSKit's (checks/ihs/test_gskit_server.py):
 *
 *   GSKKM_OpenKeyDbX(info, &handle): info is a structure of at least 0x128 bytes, zeroed; an int at offset 0 says
 *     what to open, and 2 is a cryptographic token: the PKCS #11 library's path is the char * at offset 0x10, the
 *     token label the char * at 0x18 and the token's user PIN the char * at 0x110 (for a key database file, the
 *     file is at 0x08 and its password at 0x110). The library checks the type, then hands these three to its token
 *     opener, which loads the library, finds the token by label and logs in. Proved: the right PIN opens the token,
 *     a wrong one returns 16 (GSKKM_ERR_DATABASE_INVALID_PASSWORD), an unknown label 137
 *     (GSKKM_ERR_CRYPTOGRAPHIC_TOKEN_LABEL_NOT_EXIST). The handle is an int (every other function takes it in the
 *     first 32-bit register); it is written through a pointer, here to a long.
 *   GSKKM_CreateNewCertReqSigExt(handle, label, bits, dn, sigalg, extra, extra_length, csrfile, &der, &der_length):
 *     generates a key pair named label of bits bits in the opened token and writes a PKCS #10 request for it to
 *     csrfile (Base64); der and der_length may both be NULL. dn is a GSKKM_DNItem: twelve char * fields and an int
 *     (GSKKM_InitDNItem zeroes 0x64 bytes); the common name is the first field, the only one used here. extra and
 *     extra_length become a buffer the request is built with; NULL and 0 here. sigalg picks the request's signature:
 *     4 is sha256WithRSAEncryption (1 md5, 2 sha1, 3 sha224, 5 sha384, 6 sha512, read back with openssl req).
 *     GSKKM_CreateNewCertReq (the same without sigalg, extra and extra_length) signed its request with MD5 here (its
 *     code picks SHA-256 only when a global flag is set, FIPS mode by the look of it; not tried), so it is not used.
 *   GSKKM_ReceiveCert(handle, der, length, flag): stores the CA's certificate (DER) in the token under the label of
 *     the request key whose public key it carries; flag 0.
 *   GSKKM_DeleteKey(handle, label): removes the certificate label and its key pair from the token (what gskcapicmd
 *     -cert -delete -crypto does); a label with no certificate (a request's key alone) is not found (117,
 *     GSKKM_ERR_KEY_GET_BY_LABEL).
 *   GSKKM_GetKeyDbLabelList(handle, &list): list is a chain of { char *label; next }, freed with GSKKM_FreeLabelList;
 *     in a token it lists the certificates' labels.
 *
 * On a failed gsk_environment_init it prints "gsk_environment_init: RC NAME" (gsk_strerror) and exits 2, as
 * IHS refuses to start. Otherwise it prints "ready PORT", accepts connections on 127.0.0.1:PORT, each in a thread
 * of its own (a scanner opens several at once), runs the handshake (gsk_secure_soc_init), reads one request and
 * answers with a small HTTP/1.0 response naming the protocol and cipher GSKit negotiated; each handshake is
 * logged on stderr. A client that sends nothing for 10 s is dropped. It stops accepting after MAX connections
 * when GSKSERVE_MAX is set, else runs until killed.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef void *gsk_handle;
/* GSKit's SSL API as libgsk8ssl_64.so exports it (IBM's gskssl.h declares these; the ids are plain ints) */
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
/* libgsk8km_64.so */
extern int GSKKM_Init(void);
extern int GSKKM_StashKeyDbPwd(const char *keydb, const char *password);
extern int GSKKM_CreateNewKeyDb(const char *keydb, const char *password, long expiry, void **handle);
extern int GSKKM_CloseKeyDb(void *handle);
extern int GSKKM_StoreCACert(void *handle, const unsigned char *der, int length, const char *label);
extern int GSKKM_OpenKeyDbX(void *info, long *handle);
extern int GSKKM_CreateNewCertReqSigExt(int handle, const char *label, int bits, char **dn, int sigalg,
                                        const unsigned char *extra, int extra_length, const char *csrfile,
                                        unsigned char **der, int *der_length);
extern int GSKKM_ReceiveCert(int handle, const unsigned char *der, int length, int flag);
extern int GSKKM_DeleteKey(int handle, const char *label);
extern int GSKKM_GetKeyDbLabelList(int handle, void **list);
extern int GSKKM_FreeLabelList(void *list);
extern const char *GSKKM_strerror(int rc);

/* the few identifiers this file uses itself (values: gskit_server.py, GSKIT_ATTRIBUTES) */
#define GSK_FD 300
#define GSK_SESSION_TYPE 402
#define GSK_SERVER_SESSION 508
#define GSK_CONNECT_CIPHER_SPEC_EX 244
#define GSK_PROTOCOL_USED 405

/* the text an sslstash file hides, or NULL when the file cannot be read */
static char *unstash(const char *path) {
    static char text[1025];
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    size_t i = 0;
    for (; i < n; i++) {
        text[i] = (char)(text[i] ^ 0xF5);
        if (text[i] == 0) break;
    }
    text[i] = 0;
    return text;
}

static int set(gsk_handle env, const char *arg) {
    char kind = arg[0];
    const char *eq = strchr(arg, '=');
    if (!eq || arg[1] != ':' || (kind != 'b' && kind != 'e' && kind != 'n')) {
        fprintf(stderr, "gskserve: not an attribute: %s\n", arg);
        return -1;
    }
    int id = atoi(arg + 2);
    const char *value = eq + 1;
    int rc;
    if (kind == 'b') {
        if (value[0] == '@') {
            const char *name = value + 1;
            value = getenv(name);
            if (!value) {
                fprintf(stderr, "gskserve: attribute %d reads %s, which is not set\n", id, name);
                return -1;
            }
        } else if (value[0] == '%') {
            const char *path = value + 1;
            value = unstash(path);
            if (!value) {
                fprintf(stderr, "gskserve: attribute %d reads the stash file %s, which cannot be read\n", id, path);
                return -1;
            }
        }
        rc = gsk_attribute_set_buffer(env, id, value, 0);
    } else if (kind == 'e') {
        rc = gsk_attribute_set_enum(env, id, atoi(value));
    } else {
        rc = gsk_attribute_set_numeric_value(env, id, atoi(value));
    }
    if (rc != 0) {
        printf("gsk_attribute_set %d: %d %s\n", id, rc, gsk_strerror(rc));
        return -1;
    }
    return 0;
}

static gsk_handle env;

static void serve(int fd) {
    gsk_handle soc = NULL;
    int rc = gsk_secure_soc_open(env, &soc);
    if (rc == 0) rc = gsk_attribute_set_numeric_value(soc, GSK_FD, fd);
    if (rc == 0) rc = gsk_secure_soc_init(soc);
    if (rc != 0) {
        fprintf(stderr, "handshake: %d %s\n", rc, gsk_strerror(rc));
        if (soc) gsk_secure_soc_close(&soc);
        return;
    }
    const char *cipher = "?";
    int clen = 0, protocol = 0;
    gsk_attribute_get_buffer(soc, GSK_CONNECT_CIPHER_SPEC_EX, &cipher, &clen);
    gsk_attribute_get_enum(soc, GSK_PROTOCOL_USED, &protocol);
    fprintf(stderr, "handshake: 0 protocol=%d cipher=%.*s\n", protocol, clen, cipher);
    char request[4096];
    int got = 0;
    gsk_secure_soc_read(soc, request, sizeof request, &got);
    char body[256], reply[512];
    int blen = snprintf(body, sizeof body, "GSKit served this: protocol %d, cipher %.*s\n", protocol, clen, cipher);
    int len = snprintf(reply, sizeof reply,
                       "HTTP/1.0 200 OK\r\nServer: gskserve\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                       "Connection: close\r\n\r\n%s", blen, body);
    int sent = 0;
    gsk_secure_soc_write(soc, reply, len, &sent);
    gsk_secure_soc_close(&soc);
}

static void *connection(void *arg) {
    int fd = (int)(long)arg;
    struct timeval idle = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
    serve(fd);
    close(fd);
    return NULL;
}

#define TOKEN_INFO_SIZE 0x200
#define TOKEN_TYPE 2 /* GSKKM_OpenKeyDbX: a cryptographic token */
#define SHA256_WITH_RSA 4 /* GSKKM_CreateNewCertReqSigExt's sigalg */
#define DN_FIELDS 13 /* a GSKKM_DNItem: twelve pointers and an int, the common name first */

struct label_item { char *label; struct label_item *next; };

/* --token-*: the token opened with GSKit's key management library, then one action; 0 when it succeeded */
static int token(int argc, char **argv) {
    const char *pin = getenv("GSKSERVE_TOKEN_PIN");
    const char *mode = argv[1];
    int need = strcmp(mode, "--token-request") == 0                                        ? 7
               : strcmp(mode, "--token-receive") == 0 || strcmp(mode, "--token-delete") == 0 ? 5
                                                                                             : 4;
    if (argc != need || !pin) {
        fprintf(stderr, "usage: GSKSERVE_TOKEN_PIN=... gskserve --token-request MODULE TOKEN LABEL CN CSRFILE | "
                        "--token-receive MODULE TOKEN CERT.der | --token-delete MODULE TOKEN LABEL | "
                        "--token-labels MODULE TOKEN\n");
        return 64;
    }
    const char *module = argv[2], *label = argv[3];
    unsigned char info[TOKEN_INFO_SIZE];
    memset(info, 0, sizeof info);
    int type = TOKEN_TYPE;
    memcpy(info, &type, sizeof type);
    memcpy(info + 0x10, &module, sizeof module);
    memcpy(info + 0x18, &label, sizeof label);
    memcpy(info + 0x110, &pin, sizeof pin);
    long handle = 0;
    int rc = GSKKM_Init();
    if (rc == 0) rc = GSKKM_OpenKeyDbX(info, &handle);
    if (rc != 0) {
        printf("GSKKM_OpenKeyDbX: %d %s\n", rc, GSKKM_strerror(rc));
        return 2;
    }
    if (strcmp(mode, "--token-request") == 0) {
        char *dn[DN_FIELDS] = {argv[5]};
        rc = GSKKM_CreateNewCertReqSigExt((int)handle, argv[4], 2048, dn, SHA256_WITH_RSA, NULL, 0, argv[6], NULL,
                                          NULL);
        printf("GSKKM_CreateNewCertReqSigExt: %d %s\n", rc, GSKKM_strerror(rc));
    } else if (strcmp(mode, "--token-receive") == 0) {
        static unsigned char der[16384];
        FILE *f = fopen(argv[4], "rb");
        int n = f ? (int)fread(der, 1, sizeof der, f) : -1;
        if (f) fclose(f);
        rc = n > 0 ? GSKKM_ReceiveCert((int)handle, der, n, 0) : -1;
        printf("GSKKM_ReceiveCert: %d %s\n", rc, rc >= 0 ? GSKKM_strerror(rc) : "cannot read the certificate");
    } else if (strcmp(mode, "--token-delete") == 0) {
        rc = GSKKM_DeleteKey((int)handle, argv[4]);
        printf("GSKKM_DeleteKey: %d %s\n", rc, GSKKM_strerror(rc));
    } else {
        struct label_item *list = NULL;
        rc = GSKKM_GetKeyDbLabelList((int)handle, (void **)&list);
        for (struct label_item *l = list; l; l = l->next) printf("label %s\n", l->label);
        if (list) GSKKM_FreeLabelList(list);
    }
    GSKKM_CloseKeyDb((void *)handle);
    return rc == 0 ? 0 : 2;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strncmp(argv[1], "--token-", 8) == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return token(argc, argv);
    }
    if (argc < 2) {
        fprintf(stderr, "usage: gskserve PORT b:ID=TEXT|b:ID=@ENV|b:ID=%%STASH|e:ID=N|n:ID=N ... | --stash|--create-kdb KEYDB\n");
        return 64;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stderr, NULL, _IOLBF, 0);
    if (strcmp(argv[1], "--stash") == 0 || strcmp(argv[1], "--create-kdb") == 0) {
        const char *pw = getenv("GSKSERVE_KEYDB_PW");
        if (argc < 3 || argc > 4 || !pw) {
            fprintf(stderr, "usage: GSKSERVE_KEYDB_PW=... gskserve --stash KEYDB | --create-kdb KEYDB [SIGNER.der]\n");
            return 64;
        }
        int rc = GSKKM_Init();
        if (rc == 0 && strcmp(argv[1], "--create-kdb") == 0) {
            void *kdb = NULL;
            rc = GSKKM_CreateNewKeyDb(argv[2], pw, 0, &kdb);
            if (rc != 0) {
                printf("GSKKM_CreateNewKeyDb: %d\n", rc);
                return 2;
            }
            if (argc == 4) {
                static unsigned char der[16384];
                FILE *f = fopen(argv[3], "rb");
                int n = f ? (int)fread(der, 1, sizeof der, f) : -1;
                if (f) fclose(f);
                rc = n > 0 ? GSKKM_StoreCACert(kdb, der, n, "signer") : -1;
                if (rc != 0) {
                    printf("GSKKM_StoreCACert %s: %d\n", argv[3], rc);
                    GSKKM_CloseKeyDb(kdb);
                    return 2;
                }
            }
            GSKKM_CloseKeyDb(kdb);
        }
        if (rc == 0) rc = GSKKM_StashKeyDbPwd(argv[2], pw);
        if (rc != 0) {
            printf("GSKKM_StashKeyDbPwd: %d\n", rc);
            return 2;
        }
        return 0;
    }
    int rc = gsk_environment_open(&env);
    if (rc != 0) {
        printf("gsk_environment_open: %d %s\n", rc, gsk_strerror(rc));
        return 2;
    }
    if (gsk_attribute_set_enum(env, GSK_SESSION_TYPE, GSK_SERVER_SESSION) != 0) return 2;
    for (int i = 2; i < argc; i++)
        if (set(env, argv[i]) != 0) return 2;
    rc = gsk_environment_init(env);
    if (rc != 0) {
        printf("gsk_environment_init: %d %s\n", rc, gsk_strerror(rc));
        return 2;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s, 16) != 0) {
        perror("gskserve: bind/listen");
        return 3;
    }
    printf("ready %s\n", argv[1]);
    const char *max = getenv("GSKSERVE_MAX");
    for (long n = 0, limit = max ? atol(max) : -1; limit < 0 || n < limit; n++) {
        int fd = accept(s, NULL, NULL);
        if (fd < 0) continue;
        pthread_t thread;
        if (pthread_create(&thread, NULL, connection, (void *)(long)fd) != 0) {
            close(fd);
            continue;
        }
        if (limit >= 0 && n + 1 >= limit) {
            pthread_join(thread, NULL);
            break;
        }
        pthread_detach(thread);
    }
    gsk_environment_close(&env);
    return 0;
}
