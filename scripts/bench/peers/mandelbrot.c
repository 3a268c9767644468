/* The plain loop Glint's 4K fractal is measured against (scripts/bench/bench-fractal-peer.py): the
   escape-time Mandelbrot set of `glint fractal mandelbrot` with its defaults (centre -0.75+0i,
   the image height spanning 2 units, 128 iterations, bailout 2, float), one OpenMP thread per
   core over rows, escape counts kept in memory. No interior test, no SIMD by hand, no image
   file: what a straightforward C program does. Prints the sum of the counts (so the compiler
   keeps the work) and the loop's own time.

   Build: gcc -O3 -march=native -fopenmp mandelbrot.c -o mandelbrot
   Run:   ./mandelbrot 3840 2160 [iterations] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s WIDTH HEIGHT [ITERATIONS]\n", argv[0]); return 2; }
    const int width = atoi(argv[1]), height = atoi(argv[2]);
    const int iterations = argc > 3 ? atoi(argv[3]) : 128;
    if (width < 1 || height < 1 || width > 32768 || height > 32768 || iterations < 1) {
        fprintf(stderr, "width and height must be 1 to 32768, iterations at least 1\n");
        return 2;
    }
    uint32_t *counts = malloc((size_t)width * height * sizeof *counts);
    if (!counts) { fprintf(stderr, "out of memory\n"); return 1; }
    const float scale = 2.0f / (float)height;  /* units per pixel */
    const float left = -0.75f - scale * (float)width / 2, top = scale * (float)height / 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma omp parallel for schedule(dynamic, 8)
    for (int py = 0; py < height; py++) {
        const float ci = top - ((float)py + 0.5f) * scale;
        for (int px = 0; px < width; px++) {
            const float cr = left + ((float)px + 0.5f) * scale;
            float zr = 0, zi = 0;
            int n = 0;
            while (n < iterations && zr * zr + zi * zi <= 4.0f) {
                const float t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                n++;
            }
            counts[(size_t)py * width + px] = (uint32_t)n;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t sum = 0;
    for (size_t i = 0; i < (size_t)width * height; i++) sum += counts[i];
    printf("%dx%d, %d iterations: %llu iterations in %.3f s\n", width, height, iterations,
           (unsigned long long)sum, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    free(counts);
    return 0;
}
