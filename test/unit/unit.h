/*
 * A minimal harness for the unit tests that need no MPICH: CHECK() marks the
 * running test failed, RUN() prints one line per test, unit_summary() prints
 * "N passed, N failed" and gives the exit status.
 */
#ifndef UNIT_H_INCLUDED
#define UNIT_H_INCLUDED

#include <stdio.h>

static int unit_pass, unit_fail, unit_cur_failed;

#define CHECK(cond) do {                                                   \
        if (!(cond)) {                                                     \
            printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            unit_cur_failed = 1;                                           \
        }                                                                  \
    } while (0)

static inline void run(const char *name, void (*fn)(void))
{
    unit_cur_failed = 0;
    fn();
    printf("%s: %s\n", unit_cur_failed ? "FAIL" : "ok  ", name);
    if (unit_cur_failed)
        unit_fail++;
    else
        unit_pass++;
}

static inline int unit_summary(void)
{
    printf("%d passed, %d failed\n", unit_pass, unit_fail);
    return unit_fail != 0;
}

#endif /* UNIT_H_INCLUDED */
