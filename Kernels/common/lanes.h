#ifndef GLINT_LANES_H
#define GLINT_LANES_H
/* Included by the kernels whose CPU forms pass LANES-wide vectors (4 to 16 floats, ints or
   doubles) between the program's own functions. Built for a target without AVX-512, clang notes
   that a 16-float argument then takes another calling convention than under AVX-512. That matters
   only for calls between code built for different targets, which a program never makes (all its
   functions are compiled together, for one device), so the note (-Wpsabi) is turned off: a build
   prints nothing, and a warning that does matter still reaches the build log. A compiler that
   does not know the group (NVIDIA's) would warn about the pragma itself, so it is asked first. */
#if defined(__clang__) && defined(__has_warning)
#if __has_warning("-Wpsabi")
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#endif
#endif
