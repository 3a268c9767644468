/* The clock and the median the peer programs share (included from beside them: gcc finds it in the
   including file's folder). */
#ifndef PEER_TIMING_H
#define PEER_TIMING_H
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of `n` values (n odd), which it sorts in place. */
__attribute__((unused)) static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}
#endif
