/* Runs a program as a uid of its own: `tfdrop UID PATH [ARGS...]` execs PATH with argv
 * PATH ARGS as UID (real, effective and saved uid and gid; no supplementary group; the
 * kernel clears every capability when all uids leave 0). What `setpriv --reuid --regid
 * --clear-groups` does for tfrun, in one small static exec: setpriv's dynamic start cost
 * 3 ms a call, most of a mutant's test in figlet (taskfoundry's mutation analysis compiles
 * it; tfrun uses it only when root owns it and nobody else may write it). */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: tfdrop UID PATH [ARGS...]\n");
        return 127;
    }
    char *end;
    long uid = strtol(argv[1], &end, 10);
    if (*end || uid <= 0 || uid > 65535) {
        fprintf(stderr, "tfdrop: bad uid %s\n", argv[1]);
        return 127;
    }
    uid_t r, e, s;
    if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
        getresuid(&r, &e, &s) || r != (uid_t)uid || e != (uid_t)uid || s != (uid_t)uid ||
        setresuid(0, 0, 0) == 0) {
        fprintf(stderr, "tfdrop: cannot become uid %ld: %s\n", uid, strerror(errno));
        return 127;
    }
    execv(argv[2], argv + 2);
    fprintf(stderr, "tfdrop: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
}
