/* exec_argv_log.c: a preload library for the checks (checks/hosts/argv_trace.py) that writes down the argument
 * vector of every program started through the C library's exec and posix_spawn calls, which is what any user
 * reads in /proc/PID/cmdline (ps) while the program runs. Loaded through /etc/ld.so.preload, it sees every
 * dynamically linked process on the host, whatever its user or environment (runuser, env -i, cron's environment).
 * One line per exec, appended to LOG: "pid<TAB>path<TAB>arg0<US>arg1<US>...", US being 0x1f (a newline in an
 * argument is written as 0x1d).
 * Built in the container host with its own gcc: gcc -shared -fPIC -O2 -o exec_argv_log.so exec_argv_log.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG "/run/zr-exec-argv.log"

static void note(const char *path, char *const argv[]) {
    int fd = open(LOG, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return;
    char line[65536];
    int n = snprintf(line, sizeof line, "%d\t%s\t", (int)getpid(), path ? path : "?");
    /* arguments apart by 0x1f; a newline inside one written as 0x1d, so that each exec is one line */
    for (int i = 0; argv && argv[i] && n < (int)sizeof line - 2; i++) {
        if (i) line[n++] = '\x1f';
        for (const char *c = argv[i]; *c && n < (int)sizeof line - 2; c++) line[n++] = *c == '\n' ? '\x1d' : *c;
    }
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t unused = write(fd, line, (size_t)n);
    (void)unused;
    close(fd);
}

#define NEXT(name, type) static __typeof__(type) real; if (!real) real = (__typeof__(type))dlsym(RTLD_NEXT, name)

int execve(const char *path, char *const argv[], char *const envp[]) {
    NEXT("execve", int (*)(const char *, char *const[], char *const[]));
    note(path, argv);
    return real(path, argv, envp);
}
int execv(const char *path, char *const argv[]) {
    NEXT("execv", int (*)(const char *, char *const[]));
    note(path, argv);
    return real(path, argv);
}
int execvp(const char *file, char *const argv[]) {
    NEXT("execvp", int (*)(const char *, char *const[]));
    note(file, argv);
    return real(file, argv);
}
int execvpe(const char *file, char *const argv[], char *const envp[]) {
    NEXT("execvpe", int (*)(const char *, char *const[], char *const[]));
    note(file, argv);
    return real(file, argv, envp);
}
int fexecve(int fd, char *const argv[], char *const envp[]) {
    NEXT("fexecve", int (*)(int, char *const[], char *const[]));
    note("(fd)", argv);
    return real(fd, argv, envp);
}
int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                char *const argv[], char *const envp[]) {
    NEXT("posix_spawn", int (*)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                                const posix_spawnattr_t *, char *const[], char *const[]));
    note(path, argv);
    return real(pid, path, fa, at, argv, envp);
}
int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                 char *const argv[], char *const envp[]) {
    NEXT("posix_spawnp", int (*)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                                 const posix_spawnattr_t *, char *const[], char *const[]));
    note(file, argv);
    return real(pid, file, fa, at, argv, envp);
}

/* execl, execlp, execle: their arguments gathered into a vector, then the calls above */
#define GATHER(first, ap, args, envp_out)                                   \
    char *args[1024];                                                       \
    int k = 0;                                                              \
    args[k++] = (char *)(first);                                            \
    va_start(ap, first);                                                    \
    while (k < 1023 && (args[k] = va_arg(ap, char *)) != NULL) k++;         \
    args[k] = NULL;                                                         \
    envp_out;                                                               \
    va_end(ap)

int execl(const char *path, const char *arg, ...) {
    va_list ap;
    GATHER(arg, ap, args, (void)0);
    return execv(path, args);
}
int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    GATHER(arg, ap, args, (void)0);
    return execvp(file, args);
}
int execle(const char *path, const char *arg, ...) {
    va_list ap;
    char **envp;
    GATHER(arg, ap, args, envp = va_arg(ap, char **));
    return execve(path, args, envp);
}
