/* Stands in for the program while a mutant is tested: mutant_guard.py in C (taskfoundry's
 * mutation analysis). The worker compiles it in the build image when a C compiler is there;
 * it starts in about a millisecond where the Python guard takes ten or more, and it runs once
 * per program call. Same settings, marks and exit codes as mutant_guard.py: read that one
 * first. One difference: the program gets SIGPIPE's default action, as tfrun gives it when
 * the suite grades a submission (Python ignores SIGPIPE, and a child it spawns inherits that). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SETTINGS "/task/mutant/guard.conf"
#define MAXKEYS 16

extern char **environ;

struct conf {
    int n;
    char *key[MAXKEYS], *value[MAXKEYS];
};

/* `key=value` lines; returns 0 when there is no such file. */
static int load(const char *path, struct conf *c) {
    FILE *f = fopen(path, "r");
    char line[4096];
    c->n = 0;
    if (!f) return 0;
    while (c->n < MAXKEYS && fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (!eq) continue;
        line[strcspn(line, "\n")] = 0;
        *eq = 0;
        c->key[c->n] = strdup(line);
        c->value[c->n++] = strdup(eq + 1);
    }
    fclose(f);
    return 1;
}

static const char *get(const struct conf *c, const char *key, const char *fallback) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->key[i], key)) return c->value[i];
    return fallback;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void mark(const char *marks, const char *kind) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", marks, kind);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(kind, f);
        fclose(f);
    }
}

/* The environment without TF_MUTANT, and with it when a switch is on. */
static char **environment(const char *sw) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 2, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TF_MUTANT=", 10)) env[k++] = environ[i];
    if (sw && strcmp(sw, "0")) {
        char *entry = malloc(strlen(sw) + 11);
        sprintf(entry, "TF_MUTANT=%s", sw);
        env[k++] = entry;
    }
    env[k] = NULL;
    return env;
}

static void write_all(int fd, const char *data, ssize_t len) {
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* nobody reads: the test stopped listening */
        }
        data += w;
        len -= w;
    }
}

/* "timeout", "flood" or NULL once both pipes are closed. */
static const char *relay(int out, int err, long long cap, double end) {
    struct pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
    int dest[2] = {1, 2}, open_n = 2;
    long long total = 0;
    static char buf[65536];
    while (open_n) {
        double left = end - now();
        if (left <= 0) return "timeout";
        int r = poll(fds, 2, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) return "timeout";
        for (int i = 0; i < 2 && r > 0; i++) {
            if (fds[i].fd < 0 || !fds[i].revents) continue;
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_n--;
                continue;
            }
            total += got;
            if (total > cap) return "flood";
            write_all(dest[i], buf, got);
        }
    }
    return NULL;
}

/* The child's wait status, or -1 past `end`. Its pipes close a moment before it can be
 * waited for: the naps start at 20 us (a fixed 2 ms nap cost most calls 2 ms). */
static int wait_until(pid_t pid, double end) {
    int status;
    useconds_t nap = 20;
    for (;;) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        if (now() > end) return -1;
        usleep(nap);
        if (nap < 2000) nap *= 2;
    }
}

/* Every other process of this uid, when the settings' `reap_from` says the program runs as a
 * uid of its own (tfrun, under isolation): kill(-1) from a process of that uid reaches
 * exactly them, atomically against fork, so tfrun need not start a reaper (TF_REAPED). */
static void reap(const struct conf *c) {
    long from = atol(get(c, "reap_from", "0"));
    uid_t uid = getuid();
    if (from > 0 && uid != 0 && geteuid() != 0 && (long)uid >= from) kill(-1, SIGKILL);
}

/* `program`'s link named as the task calls it (<program>.d/executable), when the worker made
 * one: a script's interpreter is handed the path it was run by, not argv[0], and a Python gold
 * spawned as /task/mutant/reference printed "usage: reference" (every ufomerge test failed on
 * the reference and counted as unreliable) */
static const char *by_name(const char *program, const char *argv0, char *buf, size_t n) {
    const char *base = strrchr(argv0, '/');
    snprintf(buf, n, "%s.d/%s", program, base ? base + 1 : argv0);
    return access(buf, X_OK) == 0 ? buf : program;
}

int main(int argc, char **argv) {
    (void)argc;
    struct conf cfg, cur;
    if (!load(SETTINGS, &cfg)) {
        fprintf(stderr, "mutant guard: no %s\n", SETTINGS);
        return 126;
    }
    long long cap = atoll(get(&cfg, "cap", "0"));
    double timeout = atof(get(&cfg, "timeout", "10"));
    const char *marks = get(&cfg, "marks", "/tmp");
    const char *program = get(&cfg, "program", "");
    const char *sw = NULL;
    if (load(get(&cfg, "current", ""), &cur)) {
        program = get(&cur, "program", program);
        sw = get(&cur, "switch", "0");
    }
    /* the soft limit only, as the Python guard: a Python gold raises it to the hard one while
     * it unpacks its own files (fabio's 185 MB hdf5plugin); with the hard limit at the cap too,
     * every run of the reference died of EFBIG and every test counted as unreliable */
    struct rlimit fsize, core = {0, 0};
    getrlimit(RLIMIT_FSIZE, &fsize);
    fsize.rlim_cur = (rlim_t)cap;
    if (fsize.rlim_max != RLIM_INFINITY && fsize.rlim_cur > fsize.rlim_max) fsize.rlim_cur = fsize.rlim_max;
    setrlimit(RLIMIT_FSIZE, &fsize); /* inherited by the program */
    setrlimit(RLIMIT_CORE, &core);
    signal(SIGPIPE, SIG_IGN);
    double start = now();

    int out[2], err[2];
    /* close-on-exec, as Python's pipes are: the program has them as 1 and 2 alone, so a
     * daemon it leaves with other output does not hold them open until the timeout */
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return 126;
    posix_spawn_file_actions_t acts;
    posix_spawn_file_actions_init(&acts);
    posix_spawn_file_actions_adddup2(&acts, out[1], 1);
    posix_spawn_file_actions_adddup2(&acts, err[1], 2);
    posix_spawn_file_actions_addclose(&acts, out[0]);
    posix_spawn_file_actions_addclose(&acts, err[0]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF);
    argv[0] = (char *)get(&cfg, "argv0", argv[0]);
    char named[4096];
    program = by_name(program, argv[0], named, sizeof named);
    pid_t pid;
    int rc = posix_spawn(&pid, program, &acts, &attr, argv, environment(sw));
    if (rc) {
        fprintf(stderr, "mutant guard: cannot run %s: %s\n", program, strerror(rc));
        return 126;
    }
    close(out[1]);
    close(err[1]);

    const char *why = relay(out[0], err[0], cap, start + timeout);
    int status = why ? -1 : wait_until(pid, start + timeout);
    kill(-pid, SIGKILL); /* what it left behind in its session goes too */
    reap(&cfg);          /* and anything of its uid elsewhere */
    if (why || status == -1) {
        why = why ? why : "timeout";
        mark(marks, why);
        waitpid(pid, NULL, 0);
        return strcmp(why, "timeout") ? 125 : 124;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGXFSZ) {
            mark(marks, "flood");
            return 125;
        }
        signal(sig, SIG_DFL);
        kill(getpid(), sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}
