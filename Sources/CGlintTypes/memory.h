/* glibc's heap trimming for the Swift side (malloc.h is not part of Swift's Glibc module).
   Host only; the kernels never include this header. */
#ifndef GLINT_MEMORY_H
#define GLINT_MEMORY_H

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
/* Hands the heap's free pages back to the system; 1 when any were. */
static inline int glint_trim_heap(void) { return malloc_trim(0); }
#else
static inline int glint_trim_heap(void) { return 0; }
#endif

#endif
