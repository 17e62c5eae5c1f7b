/* For `make bench PI=1 FSYNC_MS=N` only (bench/pi.py): loaded with LD_PRELOAD into the process
 * under test, it sleeps COMPANION_FSYNC_DELAY_MS milliseconds before every fsync and fdatasync, as an SD
 * card's slow flush would, then calls the real one. Never part of the installed service. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void delay(void) {
    static long ns = -1;
    if (ns < 0) {
        const char *v = getenv("COMPANION_FSYNC_DELAY_MS");
        ns = v ? (long)(atof(v) * 1e6) : 0;
    }
    if (ns > 0) {
        struct timespec t = {ns / 1000000000L, ns % 1000000000L};
        while (nanosleep(&t, &t) != 0) {}
    }
}

int fsync(int fd) {
    static int (*real)(int) = 0;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    delay();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int) = 0;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    delay();
    return real(fd);
}
