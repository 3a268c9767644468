/* What this machine's memory moves, the scale for docs/PERFORMANCE.md's byte counts: over two
   arrays of 256 MiB, with one OpenMP thread per core and 256-bit AVX2 loads and stores,
     read       loads only (a sum of one lane a vector, so nothing is optimised away),
     write-nt   stores past the caches (vmovntps),
     write      ordinary stores (the caches read each line first: counted once),
     copy       b = a + 1 (bytes read and written both counted),
   in GB/s, the median of 7 passes each after one untimed pass.

   Build: gcc -O2 -mavx2 -fopenmp scripts/bench/peers/memory-bandwidth.c -o memory-bandwidth
   Run:   ./memory-bandwidth            (OMP_NUM_THREADS sets the threads) */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer-timing.h"

enum { PASSES = 7 };

int main(void) {
    const size_t n = (size_t)64 << 20;   /* floats: 256 MiB an array */
    float *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b);
    if (!a || !b) { fprintf(stderr, "memory-bandwidth: out of memory\n"); return 1; }
    memset(a, 1, n * sizeof *a);
    memset(b, 1, n * sizeof *b);
    double read[PASSES], nt[PASSES], write[PASSES], copy[PASSES], sink = 0;
    for (int pass = -1; pass < PASSES; pass++) {
        double t = now(), s = 0;
        #pragma omp parallel for reduction(+:s)
        for (size_t i = 0; i < n; i += 8) s += _mm256_cvtss_f32(_mm256_load_ps(a + i));
        double r = now() - t;
        sink += s;
        t = now();
        #pragma omp parallel for
        for (size_t i = 0; i < n; i += 8) _mm256_stream_ps(b + i, _mm256_set1_ps(1.0f));
        _mm_sfence();
        double w = now() - t;
        t = now();
        #pragma omp parallel for
        for (size_t i = 0; i < n; i += 8) _mm256_store_ps(b + i, _mm256_set1_ps(2.0f));
        double o = now() - t;
        t = now();
        #pragma omp parallel for
        for (size_t i = 0; i < n; i += 8) _mm256_store_ps(b + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_set1_ps(1.0f)));
        double c = now() - t;
        if (pass < 0) continue;
        double bytes = (double)n * sizeof *a;
        read[pass] = bytes / r * 1e-9;
        nt[pass] = bytes / w * 1e-9;
        write[pass] = bytes / o * 1e-9;
        copy[pass] = 2 * bytes / c * 1e-9;
    }
    printf("threads %d: read %.1f  write-nt %.1f  write %.1f  copy %.1f GB/s (medians of %d)%s\n",
           omp_get_max_threads(), median(read, PASSES), median(nt, PASSES), median(write, PASSES), median(copy, PASSES), PASSES, sink == 0.5 ? " " : "");
    free(a);
    free(b);
    return 0;
}
