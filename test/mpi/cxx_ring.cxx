// C++ through mpicxx: std::vector buffers around a ring with the C API at
// sizes that take each path (a fast box, MPICH's queue, CMA on one node and
// ch4:tcp's rendezvous across hosts), and MPI-2's C++ bindings (MPI::,
// libmpicxx) for a ring of a derived type and an allreduce.  Every received
// value is checked; rank 0 prints " No Errors".
#include <mpi.h>
#include <complex>
#include <cstdio>
#include <numeric>
#include <vector>

static int ring_c(int rank, int nprocs)
{
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int errs = 0;
    for (std::size_t n : {3u, 1000u, 700000u}) {
        std::vector<std::complex<double>> out(n), in(n, {-1, -1}), want(n);
        for (std::size_t i = 0; i < n; i++) {
            out[i] = {double(i), double(rank)};
            want[i] = {double(i), double(left)};
        }
        MPI_Request req;
        MPI_Irecv(in.data(), int(n), MPI_CXX_DOUBLE_COMPLEX, left, 0, MPI_COMM_WORLD, &req);
        MPI_Send(out.data(), int(n), MPI_CXX_DOUBLE_COMPLEX, right, 0, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (in != want) {
            std::printf("rank %d: MPI_CXX_DOUBLE_COMPLEX x %zu from rank %d: wrong values\n",
                        rank, n, left);
            errs++;
        }
    }
    return errs;
}

static int ring_cxx(int rank, int nprocs)
{
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int errs = 0;
    // every third int of 3n, received contiguous
    const int n = 5000;
    std::vector<int> out(3 * n), in(n, -1);
    std::iota(out.begin(), out.end(), rank * 100000);
    MPI::Datatype every3 = MPI::INT.Create_vector(n, 1, 3);
    every3.Commit();
    MPI::Status status;
    MPI::COMM_WORLD.Sendrecv(out.data(), 1, every3, right, 1, in.data(), n, MPI::INT, left, 1,
                             status);
    every3.Free();
    if (status.Get_count(MPI::INT) != n)
        errs++;
    for (int i = 0; i < n; i++) {
        if (in[i] != left * 100000 + 3 * i) {
            std::printf("rank %d: MPI:: vector, element %d: %d\n", rank, i, in[i]);
            errs++;
            break;
        }
    }
    double sum = 0, mine = rank + 0.5;
    MPI::COMM_WORLD.Allreduce(&mine, &sum, 1, MPI::DOUBLE, MPI::SUM);
    if (sum != nprocs * (nprocs - 1) / 2.0 + nprocs * 0.5) {
        std::printf("rank %d: MPI::COMM_WORLD.Allreduce: %g\n", rank, sum);
        errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int errs = ring_c(rank, nprocs) + ring_cxx(rank, nprocs);
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (errs)
            std::printf(" Found %d errors\n", errs);
        else
            std::printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
