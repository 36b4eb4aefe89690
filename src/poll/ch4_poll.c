/*
 * mpich-multichannel: polling arbiter CVARs, MPI_T performance variables and
 * initialization (called from MPID_Init).
 */
#include "mpidimpl.h"
#include "ch4_poll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_POLL
      description : cvars that control how ch4 progress shares polls between shared memory and the netmod

cvars:
    - name        : MPIR_CVAR_CH4_POLL_POLICY
      category    : CH4_POLL
      type        : enum
      default     : adaptive
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        How ch4 progress divides its polls between shared memory and the netmod; shared memory is polled on every pass, the policy decides how often the netmod is. Default adaptive (best in bench/run-policy-bench, see doc/arbiter.md).
          roundrobin - both channels on every pass (stock MPICH).
          static     - the netmod once every MPIR_CVAR_CH4_POLL_STATIC_RATIO passes.
          dynamic    - ratio m / (n + 1) recomputed every MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY messages (m from shared memory, n from the netmod).
          adaptive   - dynamic, but the netmod is polled on every pass while a wait needs it, and at the larger of MPIR_CVAR_CH4_POLL_STATIC_RATIO and the dynamic ratio while a wait needs only shared memory.

    - name        : MPIR_CVAR_CH4_POLL_STATIC_RATIO
      category    : CH4_POLL
      type        : int
      default     : 50
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Shared-memory polls per netmod poll under the static policy, and the floor under
        adaptive while every awaited request is intra-node. Default 50. 1 polls the netmod
        on every pass; must be 1 or more; a value above MPIR_CVAR_CH4_POLL_MAX_RATIO is
        lowered to it.

    - name        : MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY
      category    : CH4_POLL
      type        : int
      default     : 10
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Messages between ratio updates under the dynamic and adaptive policies; the ratio
        is computed from exactly these messages. Default 10; must be 1 or more.

    - name        : MPIR_CVAR_CH4_POLL_MAX_RATIO
      category    : CH4_POLL
      type        : int
      default     : 1000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Upper bound of the shared-memory to netmod polling ratio under every policy, so
        the netmod is polled at least once every this many passes. Default 1000; must be
        1 or more (1 makes every policy round-robin).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_POLL_arbiter_t MPIDI_POLL_global;

static MPIDI_POLL_policy_t policy_of_cvar(void)
{
    switch (MPIR_CVAR_CH4_POLL_POLICY) {
        case MPIR_CVAR_CH4_POLL_POLICY_static:
            return MPIDI_POLL_POLICY_STATIC;
        case MPIR_CVAR_CH4_POLL_POLICY_dynamic:
            return MPIDI_POLL_POLICY_DYNAMIC;
        case MPIR_CVAR_CH4_POLL_POLICY_adaptive:
            return MPIDI_POLL_POLICY_ADAPTIVE;
        default:
            return MPIDI_POLL_POLICY_ROUNDROBIN;
    }
}

static void register_pvar(MPIR_T_pvar_class_t varclass, MPI_Datatype dtype, const char *name,
                          void *addr, const char *desc)
{
    MPIR_T_PVAR_REGISTER_impl(varclass, dtype, name, addr, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              NULL, NULL, "CH4_POLL", desc);
}

static void register_pvars(void)
{
    MPIDI_POLL_arbiter_t *a = &MPIDI_POLL_global;

    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_shm_polls",
                  &a->shm_polls, "Progress passes that polled shared memory");
    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_nm_polls",
                  &a->nm_polls, "Progress passes that polled the netmod");
    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_nm_skipped",
                  &a->nm_skipped, "Progress passes on which the arbiter skipped the netmod");
    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_shm_msgs",
                  &a->msgs[MPIDI_POLL_SHM], "Incoming messages discovered by shared memory");
    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_nm_msgs",
                  &a->msgs[MPIDI_POLL_NM], "Incoming messages discovered by the netmod");
    register_pvar(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch4_poll_ratio_updates",
                  &a->ratio_updates, "Times the dynamic ratio was recomputed");
    register_pvar(MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED, "ch4_poll_ratio", &a->ratio,
                  "Current shared-memory polls per netmod poll (outside wait hints)");
}

int MPIDI_POLL_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    char val[32];

    int err = MPIDI_POLL_arbiter_init(&MPIDI_POLL_global, policy_of_cvar(),
                                      MPIR_CVAR_CH4_POLL_STATIC_RATIO,
                                      MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY,
                                      MPIR_CVAR_CH4_POLL_MAX_RATIO);
    if (err) {
        static const char *const names[] = {
            [MPIDI_POLL_EINVAL_STATIC_RATIO] = "MPIR_CVAR_CH4_POLL_STATIC_RATIO",
            [MPIDI_POLL_EINVAL_HISTORY] = "MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY",
            [MPIDI_POLL_EINVAL_MAX_RATIO] = "MPIR_CVAR_CH4_POLL_MAX_RATIO",
        };
        const int values[] = {
            [MPIDI_POLL_EINVAL_STATIC_RATIO] = MPIR_CVAR_CH4_POLL_STATIC_RATIO,
            [MPIDI_POLL_EINVAL_HISTORY] = MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY,
            [MPIDI_POLL_EINVAL_MAX_RATIO] = MPIR_CVAR_CH4_POLL_MAX_RATIO,
        };
        snprintf(val, sizeof(val), "%d", values[err]);
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             names[err], val);
    }
    register_pvars();

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
