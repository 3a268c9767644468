/* GNU process calls for the Swift side that Swift's Glibc module leaves out (they need
   _GNU_SOURCE or headers it does not include). Host only; the kernels never include this. */
#ifndef GLINT_PROCESS_H
#define GLINT_PROCESS_H

#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

/* A pipe whose two ends are closed on exec: a child gets only what it is given. */
static inline int glint_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

/* Closes every descriptor from `from` up in the spawned child. */
static inline int glint_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
#endif

#endif
