/* Where the pages of a fresh destination should be mapped in: before a copy into it, on one
   thread (MADV_POPULATE_WRITE, what a direct device read is given), or by the copy itself running
   on every thread (what a read through pinned staging does). 232 MiB, huge pages advised, a fresh
   mapping each pass; prints both times for each of 8 passes (the first passes pay for the kernel
   assembling huge pages).

   Build: gcc -O2 scripts/bench/peers/first-touch.c -o first-touch -lpthread
   Run:   ./first-touch [THREADS]       (default 2) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "peer-timing.h"

#define BYTES ((size_t)232 << 20)
enum { PASSES = 8, MAX_THREADS = 64 };

static char *source, *target;
static int threads;

static void *copy_part(void *arg) {
    size_t k = (size_t)arg, n = BYTES / threads;
    memcpy(target + k * n, source + k * n, k + 1 == (size_t)threads ? BYTES - k * n : n);
    return NULL;
}

static void parallel_copy(void) {
    pthread_t th[MAX_THREADS];
    for (long k = 1; k < threads; k++) pthread_create(&th[k], NULL, copy_part, (void *)k);
    copy_part(0);
    for (int k = 1; k < threads; k++) pthread_join(th[k], NULL);
}

static char *fresh(void) {
    char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, BYTES, MADV_HUGEPAGE);
    return p;
}

int main(int argc, char **argv) {
    threads = argc > 1 ? atoi(argv[1]) : 2;
    if (threads < 1 || threads > MAX_THREADS) { fprintf(stderr, "first-touch: THREADS must be 1 to %d\n", MAX_THREADS); return 2; }
    source = malloc(BYTES);
    memset(source, 1, BYTES);
    double before[PASSES], during[PASSES];
    for (int pass = 0; pass < PASSES; pass++) {
        target = fresh();
        double t0 = now();
        madvise(target, BYTES, 23 /* MADV_POPULATE_WRITE */);
        parallel_copy();
        before[pass] = (now() - t0) * 1e3;
        munmap(target, BYTES);
        target = fresh();
        t0 = now();
        parallel_copy();
        during[pass] = (now() - t0) * 1e3;
        munmap(target, BYTES);
        printf("pass %d: populated first %.1f ms, faulted in by the copy %.1f ms\n", pass, before[pass], during[pass]);
    }
    printf("%d threads, medians of the last 7: populated first %.1f ms, faulted in by the copy %.1f ms\n", threads,
           median(before + 1, PASSES - 1), median(during + 1, PASSES - 1));
    return 0;
}
