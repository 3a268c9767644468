// A deep-zoom reference orbit, z <- z² + a step by step, each part of each step correctly rounded
// once (glint_orbit_step.h): running an orbit on one thread or two, the steps, and the precision
// that follows the derivative. The forms and the state are in orbit_internal.h.
#include "orbit_internal.h"

// MARK: two threads in lock step

static inline void pause_or_yield(unsigned *spins) {
    // Steps take microseconds: spin first, yield once a wait is long (a busy machine), and sleep
    // once it is longer (the second thread while the orbit runs on one).
    if (++*spins < SPINS) {
#if defined(__x86_64__)
        _mm_pause();
#endif
    } else if (*spins < 4 * SPINS) {
        sched_yield();
    } else {
        const struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    }
}

static void barrier(glint_orbit_stepper *st) {
    unsigned long generation = atomic_load_explicit(&st->barrier_generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&st->barrier_count, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&st->barrier_count, 0, memory_order_relaxed);
        atomic_store_explicit(&st->barrier_generation, generation + 1, memory_order_release);
    } else {
        unsigned spins = 0;
        while (atomic_load_explicit(&st->barrier_generation, memory_order_acquire) == generation)
            pause_or_yield(&spins);
    }
}

// MARK: running an orbit

static void *worker_main(void *arg) {
    glint_orbit_stepper *st = arg;
    unsigned long seen = st->worker_start;
    for (;;) {
        unsigned spins = 0;
        unsigned long go;
        while ((go = atomic_load_explicit(&st->go, memory_order_acquire)) == seen) pause_or_yield(&spins);
        seen = go;
        if (atomic_load_explicit(&st->stop, memory_order_acquire)) break;
        orbit_lane_forward(st, 1);
        barrier(st);
        orbit_lane_result(st, 1);
        atomic_store_explicit(&st->done, go, memory_order_release);
    }
    return NULL;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int start_worker(glint_orbit_stepper *st) {
    atomic_store(&st->stop, 0);
    st->worker_start = atomic_load(&st->go);
    atomic_store(&st->done, st->worker_start);
    return pthread_create(&st->worker, NULL, worker_main, st) == 0;
}

static void stop_worker(glint_orbit_stepper *st) {
    atomic_store_explicit(&st->stop, 1, memory_order_release);
    atomic_fetch_add_explicit(&st->go, 1, memory_order_release);
    pthread_join(st->worker, NULL);
}

/// One step of the state, z <- z² + a; the new point's parts as doubles (mpfr_get_d's).
static void step(glint_orbit_stepper *st, mpfr_srcptr a_re, mpfr_srcptr a_im, int threaded, double *re, double *im) {
    if (!st->in_mpfr) {
        if (threaded) {
            const unsigned long go = atomic_load_explicit(&st->go, memory_order_relaxed) + 1;
            atomic_store_explicit(&st->go, go, memory_order_release);
            unsigned spins = 0;
            orbit_lane_forward(st, 0);
            barrier(st);
            orbit_lane_result(st, 0);
            while (atomic_load_explicit(&st->done, memory_order_acquire) != go) pause_or_yield(&spins);
        } else {
            orbit_lane_forward(st, 0);
            orbit_lane_forward(st, 1);
            orbit_lane_result(st, 0);
            orbit_lane_result(st, 1);
        }
        if (st->lanes[0].ok && st->lanes[1].ok) {
            *re = st->lanes[0].value;
            *im = st->lanes[1].value;
            if (isnan(*re) || isnan(*im)) {
                // Outside the normal doubles: through MPFR for mpfr_get_d's rounding.
                orbit_digits_to_mpfr(st, st->lanes[0].next, st->count[0] + 1, st->lanes[0].next_sign, st->lanes[0].next_zero,
                               st->result_grid, st->x);
                orbit_digits_to_mpfr(st, st->lanes[1].next, st->count[1] + 1, st->lanes[1].next_sign, st->lanes[1].next_zero,
                               st->result_grid, st->y);
                *re = mpfr_get_d(st->x, MPFR_RNDN);
                *im = mpfr_get_d(st->y, MPFR_RNDN);
            }
            orbit_commit(st);
            return;
        }
        // A check failed: this step through MPFR.
        orbit_to_mpfr(st);
    }
    if (st->fft_run) st->mpfr_steps++;
    orbit_step_mpfr(st, st->x, st->y, a_re, a_im);
    *re = mpfr_get_d(st->x, MPFR_RNDN);
    *im = mpfr_get_d(st->y, MPFR_RNDN);
    if (st->fft_run) orbit_to_digits(st);
}

/// Sets the state to (x, y) for steps adding a, in digits where the FFT form can take them (for
/// this run the FFT form is off if a cannot be set up for it); starts the second thread where it
/// may help, and returns whether it did. end_run undoes both.
static int begin_run(glint_orbit_stepper *st, mpfr_srcptr x, mpfr_srcptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    st->fft_run = st->fft && orbit_setup_a(st, 0, a_re) && orbit_setup_a(st, 1, a_im);
    mpfr_set(st->x, x, MPFR_RNDN);
    mpfr_set(st->y, y, MPFR_RNDN);
    st->in_mpfr = 1;
    if (st->fft_run) orbit_to_digits(st);
    return st->fft_run && !st->in_mpfr && st->threads == 2 && start_worker(st);
}

static void end_run(glint_orbit_stepper *st, int worker) {
    if (worker) stop_worker(st);
}

/// The need (glint_orbit_following) of the step from the point (zr, zi), whose derivative
/// becomes *next.
static long follow_need(const glint_orbit_following *f, double zr, double zi, long bound, glint_orbit_following *next) {
    double r = 2 * (zr * f->re - zi * f->im), i = 2 * (zr * f->im + zi * f->re);
    long e = f->exp;
    if (f->add_one) {
        if (e < -1000 || (r == 0 && i == 0)) {
            // 2z·dz is far below 1 (or nothing): dz' is 1 to a double's precision.
            r = 1;
            i = 0;
            e = 0;
        } else {
            r += ldexp(1.0, (int)(e < 1100 ? -e : -1100));
        }
    }
    const double m = fabs(r) > fabs(i) ? fabs(r) : fabs(i);
    if (m == 0 || !isfinite(m)) {
        next->re = next->im = 0;
        next->exp = 0;
        return LONG_MAX / 2;
    }
    int k;
    frexp(m, &k);
    next->re = ldexp(r, -k);
    next->im = ldexp(i, -k);
    next->exp = e + k;
    // |dz'| ≥ 2^(exp − 1).
    return f->reference_bits + 64 + bound - (next->exp - 1);
}

static long run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                int *escaped, glint_orbit_following *follow, mpfr_ptr end_re, mpfr_ptr end_im);

long glint_orbit_run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                     mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                     int *escaped) {
    return run(st, start_re, start_im, a_re, a_im, fold, testing_start, points, limit, re, im, escaped, NULL, NULL,
               NULL);
}

long glint_orbit_run_following(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im,
                               mpfr_srcptr a_re, mpfr_srcptr a_im, int testing_start, long points, double limit,
                               double *re, double *im, int *escaped, glint_orbit_following *follow,
                               mpfr_ptr end_re, mpfr_ptr end_im) {
    follow->stopped = 0;
    follow->need = 0;
    return run(st, start_re, start_im, a_re, a_im, 0, testing_start, points, limit, re, im, escaped, follow, end_re,
               end_im);
}

static long run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                int *escaped, glint_orbit_following *follow, mpfr_ptr end_re, mpfr_ptr end_im) {
    *escaped = 0;
    if (points < 1) return 0;
    // A point that is stepped from has |z|² ≤ limit, so the next one is below 2^bound (an
    // infinite limit counts as 2^1000, past any a view can set).
    const double bounded = !(limit > 4) ? 4 : limit < 0x1p1000 ? limit : 0x1p1000;
    const long bound = (long)ceil(log2(bounded)) + 3;
    const int worker = begin_run(st, start_re, start_im, a_re, a_im);
    int prefer_two = 1;
    double trial_mark = 0, trial_two = 0;
    double dr = mpfr_get_d(start_re, MPFR_RNDN), di = mpfr_get_d(start_im, MPFR_RNDN);
    long written = 0;
    for (long k = 0; k < points; k++) {
        re[k] = dr;
        im[k] = di;
        written = k + 1;
        if ((k > 0 || testing_start) && !(dr * dr + di * di <= limit)) {
            *escaped = 1;
            break;
        }
        if (k == points - 1) break;
        if (follow) {
            glint_orbit_following next = *follow;
            const long need = follow_need(follow, dr, di, bound, &next);
            if (need > follow->high || need <= follow->low) {
                follow->stopped = 1;
                follow->need = need;
                break;
            }
            *follow = next;
        }
        if (k > 0 && fold) {
            if (st->in_mpfr) {
                mpfr_abs(st->x, st->x, MPFR_RNDN);
                mpfr_abs(st->y, st->y, MPFR_RNDN);
            } else {
                st->lanes[0].sign = st->lanes[1].sign = 1;
            }
        }
        // Which steps run on two threads: the trials' and then the faster's.
        int two = worker;
        if (worker) {
            const long phase = k < WARM_UP ? -1 : (k - WARM_UP) % (2 * TRIAL + PERIOD);
            if (phase >= TRIAL && phase < 2 * TRIAL) two = 0;
            else if (phase >= 2 * TRIAL) two = prefer_two;
            if (phase == 0) {
                trial_mark = now_seconds();
            } else if (phase == TRIAL) {
                const double now = now_seconds();
                trial_two = now - trial_mark;
                trial_mark = now;
            } else if (phase == 2 * TRIAL) {
                prefer_two = trial_two <= now_seconds() - trial_mark;
            }
        }
        // A few thousand bits make a step about a microsecond: then the question is asked every
        // 256 steps; from 64 limbs (4,096 bits) up, at every step.
        if (st->cancelled && (st->limbs >= 64 || (k & 255) == 0) && st->cancelled()) {
            *escaped = -1;
            break;
        }
        step(st, a_re, a_im, two, &dr, &di);
    }
    end_run(st, worker);
    if (end_re) {
        if (!st->in_mpfr) orbit_to_mpfr(st);
        mpfr_set(end_re, st->x, MPFR_RNDN);
        mpfr_set(end_im, st->y, MPFR_RNDN);
    }
    return written;
}

void glint_orbit_set_cancel(glint_orbit_stepper *st, int (*cancelled)(void)) { st->cancelled = cancelled; }

void glint_orbit_step(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    const int worker = begin_run(st, x, y, a_re, a_im);
    double re, im;
    step(st, a_re, a_im, worker, &re, &im);
    end_run(st, worker);
    if (!st->in_mpfr) orbit_to_mpfr(st);
    mpfr_set(x, st->x, MPFR_RNDN);
    mpfr_set(y, st->y, MPFR_RNDN);
}

glint_orbit_stepper *glint_orbit_stepper_create(long precision, int threads, int fft) {
    if (precision < MPFR_PREC_MIN || precision > MPFR_PREC_MAX / 2) return NULL;
    glint_orbit_stepper *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->precision = precision;
    st->limbs = (precision + 63) / 64;
    st->threads = threads >= 2 ? 2 : 1;
    mpfr_inits2(precision, st->x, st->y, (mpfr_ptr)0);
    mpfr_inits2(2 * precision, st->xx, st->yy, st->xy, (mpfr_ptr)0);
    mpfr_inits2(precision + GUARD_BITS, st->near_re, st->near_yy, st->near_im, (mpfr_ptr)0);  // used from NEAR_MIN_BITS
    st->product_limbs = malloc(sizeof(u64) * (size_t)(6 * st->limbs));
    if (!st->product_limbs) {
        glint_orbit_stepper_destroy(st);
        return NULL;
    }
    st->fft = fft > 0 || (fft < 0 && precision >= FFT_THRESHOLD_BITS);
    if (st->fft && !orbit_setup_fft(st)) {
        orbit_free_fft(st);
        memset(st->lanes, 0, sizeof st->lanes);
        st->limbs_buffer = NULL;
        st->digit_buffer = NULL;
        st->fft = 0;
    }
    return st;
}

void glint_orbit_stepper_destroy(glint_orbit_stepper *st) {
    if (!st) return;
    if (st->fft) orbit_free_fft(st);
    mpfr_clears(st->x, st->y, st->xx, st->yy, st->xy, st->near_re, st->near_yy, st->near_im, (mpfr_ptr)0);
    free(st->product_limbs);
    free(st);
}

int glint_orbit_stepper_uses_fft(const glint_orbit_stepper *st) { return st->fft; }
unsigned long glint_orbit_stepper_mpfr_steps(const glint_orbit_stepper *st) { return st->mpfr_steps; }
