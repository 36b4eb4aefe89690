## mpich-multichannel: fast boxes in front of the posix eager queue (included
## from src/mpid/ch4/shm/posix/eager/Makefile.mk by maint/overlay)

if BUILD_CH4_SHM_POSIX_EAGER_IQUEUE

noinst_HEADERS += src/mpid/ch4/shm/posix/eager/fbox/fbox_direct.h \
                  src/mpid/ch4/shm/posix/eager/fbox/fbox_post.h \
                  src/mpid/ch4/shm/posix/eager/fbox/fbox_ring.h

mpi_core_sources += src/mpid/ch4/shm/posix/eager/fbox/fbox_init.c \
                    src/mpid/ch4/shm/posix/eager/fbox/fbox_ring.c

endif
