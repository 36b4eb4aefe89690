# mpich-multichannel as a Spack package (doc/deploy.md, *Spack*).

import spack
from spack.package import *

try:  # Spack 1.0 on: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
except ImportError:
    pass

# Compilers provide the virtual packages c, cxx and fortran from Spack 0.23
# on (not yet in its 0.23.0.dev0 snapshots)
LANGUAGE_VIRTUALS = spack.spack_version_info >= (0, 23, 0) and spack.spack_version != "0.23.0.dev0"


class MpichMultichannel(AutotoolsPackage):
    """MPICH with the ch4:tcp netmod (socket buffers, eager limit and timeouts
    as CVARs; only proven processes of the job connect), fast boxes and CMA in
    shared memory, and a polling arbiter between them, built on an MPICH
    release; mpich-mc-tune writes the settings that beat the defaults on a
    cluster's links."""

    homepage = "https://www.mpich.org"
    # this project's tree, packed as mpich-multichannel-0.1.tar.gz by whoever
    # builds it (no public release yet): put it in a Spack mirror, or build a
    # checkout with dev_path=<checkout>
    url = "file:///dev/null/mpich-multichannel-0.1.tar.gz"

    version("0.1")

    variant(
        "mpich",
        default="5.0.1",
        values=("4.0.2", "4.2.1", "5.0.1"),
        multi=False,
        description="the MPICH release the modules are built into",
    )
    variant(
        "mpich_src",
        default="none",
        values=any,
        description="a local MPICH tree or tarball of that version to build on "
        "instead of the release tarball (offline sites)",
    )
    variant(
        "netmod",
        default="tcp",
        values=("tcp", "ucx", "ofi"),
        multi=False,
        description="ch4 netmod: tcp (ours), or UCX or libfabric with our shared memory",
    )
    variant("fortran", default=True, description="the Fortran bindings (mpifort, mpi_f08)")
    variant("pmix", default=False, description="a PMIx client for srun --mpi=pmix (no hydra)")

    # The release tarballs (mpich.org); mpich_src=... takes their place.
    for _v, _sha in (
        ("4.0.2", "5a42f1a889d4a2d996c26e48cbf9c595cbf4316c6814f7c181e3320d21dedd42"),
        ("4.2.1", "23331b2299f287c3419727edc2df8922d7e7abbb9fd0ac74e03b9966f9ad42d7"),
        ("5.0.1", "8c1832a13ddacf071685069f5fadfd1f2877a29e1a628652892c65211b1f3327"),
    ):
        resource(
            name="mpich-%s" % _v,
            url="https://www.mpich.org/static/downloads/%s/mpich-%s.tar.gz" % (_v, _v),
            sha256=_sha,
            expand=False,
            placement="mpich-release",
            when="mpich=%s mpich_src=none" % _v,
        )

    provides("mpi@:5.0", when="mpich=5.0.1")
    provides("mpi@:4.0", when="mpich=4.0.2")
    provides("mpi@:4.0", when="mpich=4.2.1")

    if LANGUAGE_VIRTUALS:
        depends_on("c", type="build")
        depends_on("cxx", type="build")
        depends_on("fortran", type="build", when="+fortran")
    # the overlay changes MPICH's Makefile.mk and configure.ac: MPICH's autogen.sh runs
    depends_on("autoconf@2.69:", type="build")
    depends_on("automake@1.15:", type="build")
    depends_on("libtool@2.4.4:", type="build")
    depends_on("m4", type="build")
    depends_on("perl", type="build")
    depends_on("python@3:", type=("build", "run"))
    depends_on("pkgconfig", type="build")
    depends_on("hwloc@2:")
    depends_on("libsodium")
    depends_on("ucx", when="netmod=ucx")
    depends_on("libfabric", when="netmod=ofi")
    depends_on("pmix", when="+pmix")

    # make check is this project's whole suite on simulated hosts (maint/quickstart
    # check): --test=root runs the ring below instead
    build_time_test_callbacks = []

    filter_compiler_wrappers("mpicc", "mpicxx", "mpif77", "mpif90", "mpifort", relative_root="bin")

    def autoreconf(self, spec, prefix):
        autoreconf_ = which("autoreconf")
        autoreconf_("-fi")

    def mpich_source(self):
        src = self.spec.variants["mpich_src"].value
        if src != "none":
            return src
        name = "mpich-%s.tar.gz" % self.spec.variants["mpich"].value
        return join_path(self.stage.source_path, "mpich-release", name)

    def configure_args(self):
        spec = self.spec
        args = ["--with-mpich-src=%s" % self.mpich_source(),
                "--with-netmod=%s" % spec.variants["netmod"].value]
        args += self.enable_or_disable("fortran")
        if spec.satisfies("+pmix"):
            args.append("--with-pmix=%s" % spec["pmix"].prefix)
        # MPICH's own configure: this prefix's hwloc, UCX or libfabric
        mpich = ["--with-hwloc=%s" % spec["hwloc"].prefix]
        if spec.satisfies("netmod=ucx"):
            mpich.append("--with-ucx=%s" % spec["ucx"].prefix)
        if spec.satisfies("netmod=ofi"):
            mpich.append("--with-libfabric=%s" % spec["libfabric"].prefix)
        args.append("MPICH_CONFIGURE_ARGS=%s" % " ".join(mpich))
        return args

    def setup_run_environment(self, env):
        env.set("MPICC", join_path(self.prefix.bin, "mpicc"))
        env.set("MPICXX", join_path(self.prefix.bin, "mpicxx"))
        env.set("MPIF77", join_path(self.prefix.bin, "mpif77"))
        env.set("MPIF90", join_path(self.prefix.bin, "mpif90"))

    def setup_dependent_build_environment(self, env, dependent_spec):
        module = dependent_spec.package.module
        for var, attr in (("MPICH_CC", "spack_cc"), ("MPICH_CXX", "spack_cxx"),
                          ("MPICH_FC", "spack_fc"), ("MPICH_F77", "spack_f77")):
            if hasattr(module, attr):
                env.set(var, getattr(module, attr))

    def setup_dependent_package(self, module, dependent_spec):
        self.spec.mpicc = join_path(self.prefix.bin, "mpicc")
        self.spec.mpicxx = join_path(self.prefix.bin, "mpicxx")
        if self.spec.satisfies("+fortran"):
            self.spec.mpifc = join_path(self.prefix.bin, "mpif90")
            self.spec.mpif77 = join_path(self.prefix.bin, "mpif77")

    @run_after("install")
    def check_install(self):
        """a ring of 2 ranks through the installed mpicc and mpiexec (hydra builds)"""
        if self.spec.satisfies("+pmix") or not self.run_tests:
            return
        prog = join_path(self.stage.source_path, "spack-ring")
        with open(prog + ".c", "w") as f:
            f.write(RING)
        Executable(join_path(self.prefix.bin, "mpicc"))("-o", prog, prog + ".c")
        out = Executable(join_path(self.prefix.bin, "mpiexec"))("-n", "2", prog, output=str)
        print("mpich-multichannel: %s" % out.strip())
        if "ring ok" not in out:
            raise InstallError("the installed MPICH did not run a ring: %s" % out)


RING = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, token = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        token = 4242;
        MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf(token == 4242 + size - 1 ? "ring ok\n" : "ring wrong: %d\n", token);
    } else {
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""
