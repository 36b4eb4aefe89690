/*
 * mpich-multichannel: ch4:ucx's worker in the wait that sleeps
 * (ch4_wake_ucx.c), called from MPICH's ucx_init.c by the overlay.
 */
#ifndef CH4_WAKE_UCX_H_INCLUDED
#define CH4_WAKE_UCX_H_INCLUDED

#include <stdint.h>
#include <ucp/api/ucp.h>

/* UCP_FEATURE_WAKEUP where waits sleep, else 0 */
uint64_t MPIDI_POLL_ucx_features(void);
/* the worker of VCI vci is up: its event fd joins the wait */
void MPIDI_POLL_ucx_worker(ucp_worker_h worker, int vci);

#endif /* CH4_WAKE_UCX_H_INCLUDED */
