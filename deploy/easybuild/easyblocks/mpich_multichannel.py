"""EasyBuild support for mpich-multichannel: its own configure (which fetches,
overlays, configures and builds MPICH with ch4:tcp, C++ and Fortran) in place
of MPICH's, then EasyBuild's MPICH sanity check on the install.

    eb --include-easyblocks=deploy/easybuild/easyblocks/mpich_multichannel.py ...
"""
from easybuild.easyblocks.mpich import EB_MPICH


class EB_mpich_minus_multichannel(EB_MPICH):
    """An MPICH derivative built by its own configure and make"""

    def configure_step(self):
        """EB_MPICH's clean build environment, none of its MPICH configure options:
        ours choose them (doc/deploy.md, *EasyBuild*)"""
        super().configure_step(add_mpich_configopts=False)

    def sanity_check_step(self, *args, **kwargs):
        """EasyBuild's MPICH check: the MPICH library names of 3.1.1 on (this
        project's own version is not MPICH's), shared libraries only, as built"""
        kwargs.update(use_new_libnames=True, check_static_libs=False)
        super().sanity_check_step(*args, **kwargs)
