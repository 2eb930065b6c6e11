#include <sys/prctl.h>
#include <sys/resource.h>

/* prctl is variadic, which Swift cannot call: one fixed-arity wrapper. */
static inline int kv_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    int a = setrlimit(RLIMIT_CORE, &none);
    int b = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return (a == 0 && b == 0) ? 0 : -1;
}

/* Raises the soft open-file limit to the hard one; returns the soft limit
   then in force (RLIM_INFINITY as is; 0 if it cannot be read). */
static inline unsigned long long kv_raise_file_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
    if (limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &limit);
        if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
    }
    return (unsigned long long)limit.rlim_cur;
}

/* RLIMIT_MEMLOCK, soft and hard; RLIM_INFINITY reads as UINT64_MAX. */
static inline int kv_memlock_limit(unsigned long long *soft, unsigned long long *hard) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return -1;
    *soft = limit.rlim_cur == RLIM_INFINITY ? ~0ULL : (unsigned long long)limit.rlim_cur;
    *hard = limit.rlim_max == RLIM_INFINITY ? ~0ULL : (unsigned long long)limit.rlim_max;
    return 0;
}

/* Raises RLIMIT_MEMLOCK's soft limit to its hard limit (which needs no privilege). */
static inline int kv_raise_memlock_to_hard(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return -1;
    limit.rlim_cur = limit.rlim_max;
    return setrlimit(RLIMIT_MEMLOCK, &limit);
}
