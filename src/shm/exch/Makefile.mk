## mpich-multichannel: small collectives by exchange through shared memory
## (included from src/mpid/ch4/shm/posix/Makefile.mk by maint/overlay)

noinst_HEADERS += src/mpid/ch4/shm/posix/exch/exch_coll.h \
                  src/mpid/ch4/shm/posix/exch/exch_layout.h

mpi_core_sources += src/mpid/ch4/shm/posix/exch/exch_coll.c \
                    src/mpid/ch4/shm/posix/exch/exch_layout.c
