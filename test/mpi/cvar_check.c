/* Settings a tool wrote (mpich-mc-tune) are valid: started with them in its
 * environment, the job passes MPI_Init, every rank reads each NAME=VALUE
 * argument back through MPI_T (integer or enum CVARs), and messages from
 * 1 B to 4 MiB between every pair of ranks arrive intact under them.
 * Needs at least one argument: a run with nothing to check fails. */
#include "mmc_test.h"

static void check_cvar(int rank, const char *setting)
{
    char name[256];
    const char *want = strchr(setting, '=');
    if (!want || want - setting >= (long) sizeof(name)) {
        MMC_ERR("rank %d: '%s' is not NAME=VALUE\n", rank, setting);
        return;
    }
    snprintf(name, sizeof(name), "%.*s", (int) (want - setting), setting);
    want++;
    int idx;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS) {
        MMC_ERR("rank %d: MPI_T has no %s\n", rank, name);
        return;
    }
    char *end;
    int item = mmc_cvar_enum(name, want), expect = (int) strtol(want, &end, 10);
    if (item >= 0)
        expect = item;
    else if (*end || end == want) {
        MMC_ERR("rank %d: %s=%s is neither a number nor an item of its enum\n", rank, name, want);
        return;
    }
    int got = mmc_cvar_int(name, expect - 1);
    if (got != expect)
        MMC_ERR("rank %d: %s reads %d through MPI_T, expected %d (%s)\n", rank, name, got,
                expect, want);
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (argc < 2)
        MMC_ERR("cvar_check: no NAME=VALUE to check\n");
    for (int i = 1; i < argc; i++)
        check_cvar(rank, argv[i]);

    size_t max = 4 << 20;
    unsigned char *sbuf = malloc(max), *rbuf = malloc(max);
    for (size_t n = 1; n <= max; n *= 4) {
        for (int step = 1; step < size; step++) {
            int to = (rank + step) % size, from = (rank - step + size) % size;
            mmc_fill(sbuf, n, step, rank);
            memset(rbuf, 0, n);
            MPI_Sendrecv(sbuf, (int) n, MPI_BYTE, to, step, rbuf, (int) n, MPI_BYTE, from, step,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(rbuf, n, step, from, "cvar_check");
        }
    }
    if (rank == 0 && !mmc_errs)
        printf("cvar_check: %d settings read back on %d ranks, messages 1 B to 4 MiB intact\n",
               argc - 1, size);
    free(sbuf);
    free(rbuf);
    return mmc_finish();
}
