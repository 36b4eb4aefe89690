/*
 * mpich-multichannel: ch4:ofi's completion queue in the wait that sleeps
 * (ch4_wake_ofi.c), called from MPICH's ofi_init.c by the overlay.
 */
#ifndef CH4_WAKE_OFI_H_INCLUDED
#define CH4_WAKE_OFI_H_INCLUDED

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

/* FI_WAIT_FD where waits sleep and the provider opens such a queue, else
 * attr's own wait object */
enum fi_wait_obj MPIDI_POLL_ofi_cq_wait(struct fid_domain *domain, struct fi_cq_attr *attr);
/* the queue is open: its fd joins the wait (the first queue; a second one
 * leaves the wait without an fd) */
void MPIDI_POLL_ofi_cq(struct fid_fabric *fabric, struct fid_cq *cq);

#endif /* CH4_WAKE_OFI_H_INCLUDED */
