/* The TPC-B transaction (ex_tpcb's) on Berkeley DB 5.3, for `lamina-bench tpcb` (bench/src/tpcb/,
 * bench/README.md "TPC-B transactions"): compiled on first use against Debian's libdb5.3-dev and
 * run as the bdb engine's child process.
 *
 *   tpcb_bdb DIR BRANCHES ACCOUNTS_PER_BRANCH SECONDS SEED KEEP(0|1) THREADS[,THREADS...]
 *
 * Environment DB_CREATE|DB_INIT_TXN|DB_INIT_LOCK|DB_INIT_LOG|DB_INIT_MPOOL|DB_THREAD, 64 MiB
 * cache, deadlock detection on every lock conflict (DB_LOCK_DEFAULT); one btree holding every row
 * under the keys every engine uses ('a'/'t'/'b' + 4-byte big-endian id; 'h' + round + thread +
 * counter); rows of 100 bytes, an 8-byte little-endian balance first. Loads in DB_TXN_SYNC
 * transactions of 10,000 rows, then per thread count runs that many threads for SECONDS, each
 * transaction: DB_RMW gets of account, branch, teller (that order, as ex_tpcb), puts, a history
 * put, commit DB_TXN_SYNC; DB_LOCK_DEADLOCK aborts and runs it again (as ex_tpcb). After each
 * thread count it sums every row and prints
 *   row,bdb,THREADS,TXNS,SECONDS,CONFLICTS,RETRIED,LOG_SYNCS,WRITTEN_BYTES,INVARIANT
 * (LOG_SYNCS: the log's st_scount; WRITTEN_BYTES: /proc/self/io write_bytes).
 */
#include <db.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD 100
#define TELLERS_PER_BRANCH 10
#define LOAD_BATCH 10000

static DB_ENV *env;
static DB *db;
static uint32_t branches, tellers, accounts;
static double seconds;
static uint64_t seed;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(int r, const char *what) {
    if (r != 0) {
        fprintf(stderr, "tpcb_bdb: %s: %s\n", what, db_strerror(r));
        exit(1);
    }
}

/* xorshift64*, seeded as lamina-bench's XorShift64Star */
static uint64_t rnd(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void key5(unsigned char *k, char kind, uint32_t id) {
    k[0] = (unsigned char)kind;
    for (int i = 0; i < 4; i++) k[1 + i] = (unsigned char)(id >> (24 - 8 * i));
}

static void be(unsigned char *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static int64_t get_le(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return (int64_t)v;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void record(unsigned char *r, int64_t balance) {
    memset(r, ' ', RECORD);
    put_le(r, (uint64_t)balance, 8);
}

static uint64_t write_bytes(void) {
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    unsigned long long v = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "write_bytes: %llu", &v) == 1) break;
    fclose(f);
    return v;
}

static uint64_t log_syncs(void) {
    DB_LOG_STAT *sp;
    uint64_t n;
    check(env->log_stat(env, &sp, 0), "log_stat");
    n = (uint64_t)sp->st_scount;
    free(sp);
    return n;
}

static void load(void) {
    unsigned char k[5], v[RECORD];
    DBT key, data;
    DB_TXN *txn = NULL;
    int n = 0;
    const char kinds[3] = {'a', 't', 'b'};
    const uint32_t counts[3] = {accounts, tellers, branches};
    record(v, 0);
    memset(&key, 0, sizeof key);
    memset(&data, 0, sizeof data);
    key.data = k;
    key.size = 5;
    data.data = v;
    data.size = RECORD;
    for (int i = 0; i < 3; i++) {
        for (uint32_t id = 0; id < counts[i]; id++) {
            if (!txn) check(env->txn_begin(env, NULL, &txn, 0), "txn_begin");
            key5(k, kinds[i], id);
            check(db->put(db, txn, &key, &data, 0), "load put");
            if (++n == LOAD_BATCH) {
                check(txn->commit(txn, DB_TXN_SYNC), "load commit");
                txn = NULL;
                n = 0;
            }
        }
    }
    if (txn) check(txn->commit(txn, DB_TXN_SYNC), "load commit");
}

struct worker {
    pthread_t th;
    uint32_t round, thread;
    double start;
    uint64_t txns, conflicts, retried;
};

/* One attempt: 0 committed, DB_LOCK_DEADLOCK (aborted), or another error. */
static int attempt(const unsigned char keys[3][5], int64_t delta, const unsigned char *hkey,
                   const unsigned char *hrow) {
    DB_TXN *txn;
    DBT key, data;
    unsigned char buf[RECORD];
    int r;
    check(env->txn_begin(env, NULL, &txn, 0), "txn_begin");
    for (int i = 0; i < 3; i++) {
        memset(&key, 0, sizeof key);
        memset(&data, 0, sizeof data);
        key.data = (void *)keys[i];
        key.size = 5;
        data.data = buf;
        data.ulen = RECORD;
        data.flags = DB_DBT_USERMEM;
        if ((r = db->get(db, txn, &key, &data, DB_RMW)) != 0) goto abort;
        if (data.size < 8) {
            fprintf(stderr, "tpcb_bdb: a row of %u bytes\n", data.size);
            exit(1);
        }
        record(buf, get_le(buf) + delta);
        data.size = RECORD;
        if ((r = db->put(db, txn, &key, &data, 0)) != 0) goto abort;
    }
    memset(&key, 0, sizeof key);
    memset(&data, 0, sizeof data);
    key.data = (void *)hkey;
    key.size = 17;
    data.data = (void *)hrow;
    data.size = RECORD;
    if ((r = db->put(db, txn, &key, &data, 0)) != 0) goto abort;
    return txn->commit(txn, DB_TXN_SYNC);
abort:
    txn->abort(txn);
    return r;
}

static void *work(void *arg) {
    struct worker *w = arg;
    uint64_t s = seed ^ ((((uint64_t)w->round << 32) | w->thread) * 0x100000001B3ULL);
    uint64_t n = 0;
    s = s * 0x9E3779B97F4A7C15ULL + 1;
    while (now() - w->start < seconds) {
        unsigned char keys[3][5], hkey[17], hrow[RECORD];
        uint32_t a = (uint32_t)(rnd(&s) % accounts);
        uint32_t b = (uint32_t)(rnd(&s) % branches);
        uint32_t t = (uint32_t)(rnd(&s) % tellers);
        int64_t delta = (int64_t)(rnd(&s) % 1999999) - 999999;
        uint64_t c = 0;
        int r;
        key5(keys[0], 'a', a);
        key5(keys[1], 'b', b);
        key5(keys[2], 't', t);
        hkey[0] = 'h';
        be(hkey + 1, w->round, 4);
        be(hkey + 5, w->thread, 4);
        be(hkey + 9, n++, 8);
        record(hrow, delta);
        put_le(hrow + 8, a, 4);
        put_le(hrow + 12, b, 4);
        put_le(hrow + 16, t, 4);
        while ((r = attempt((const unsigned char(*)[5])keys, delta, hkey, hrow)) ==
                   DB_LOCK_DEADLOCK ||
               r == DB_LOCK_NOTGRANTED)
            c++;
        check(r, "transaction");
        w->txns++;
        w->conflicts += c;
        if (c) w->retried++;
    }
    return NULL;
}

static void verdict(char *out, size_t len, uint64_t committed) {
    DBC *cur;
    DB_TXN *txn;
    DBT key, data;
    __int128 sum[4] = {0, 0, 0, 0};
    uint64_t hrows = 0;
    int r;
    check(env->txn_begin(env, NULL, &txn, 0), "txn_begin");
    /* Read-committed: the scan runs with every thread stopped, so it sees
       the same rows, and it does not keep a lock on every page it passed
       (a serializable scan of a long run's history fills the lock table). */
    check(db->cursor(db, txn, &cur, DB_READ_COMMITTED), "cursor");
    memset(&key, 0, sizeof key);
    memset(&data, 0, sizeof data);
    while ((r = cur->get(cur, &key, &data, DB_NEXT)) == 0) {
        const unsigned char *k = key.data;
        int64_t x = get_le(data.data);
        switch (k[0]) {
        case 'a': sum[0] += x; break;
        case 't': sum[1] += x; break;
        case 'b': sum[2] += x; break;
        case 'h': sum[3] += x; hrows++; break;
        }
    }
    if (r != DB_NOTFOUND) check(r, "cursor get");
    cur->close(cur);
    check(txn->commit(txn, 0), "commit");
    if (sum[0] == sum[1] && sum[1] == sum[2] && sum[2] == sum[3] && hrows == committed)
        snprintf(out, len, "ok");
    else
        snprintf(out, len,
                 "FAILED: accounts %lld tellers %lld branches %lld history %lld (%llu rows; "
                 "%llu committed)",
                 (long long)sum[0], (long long)sum[1], (long long)sum[2], (long long)sum[3],
                 (unsigned long long)hrows, (unsigned long long)committed);
}

int main(int argc, char **argv) {
    char cmd[4200], inv[512];
    uint64_t committed = 0;
    int keep;
    if (argc != 8) {
        fprintf(stderr,
                "usage: tpcb_bdb DIR BRANCHES ACCOUNTS_PER_BRANCH SECONDS SEED KEEP THREADS,...\n");
        return 2;
    }
    branches = (uint32_t)strtoul(argv[2], NULL, 10);
    tellers = branches * TELLERS_PER_BRANCH;
    accounts = branches * (uint32_t)strtoul(argv[3], NULL, 10);
    seconds = strtod(argv[4], NULL);
    seed = strtoull(argv[5], NULL, 10);
    keep = atoi(argv[6]);
    if (!branches || !accounts) {
        fprintf(stderr, "tpcb_bdb: branches and accounts: at least 1\n");
        return 2;
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", argv[1]);
    if (system(cmd) != 0) return 1;
    if (mkdir(argv[1], 0755) != 0) {
        perror(argv[1]);
        return 1;
    }
    check(db_env_create(&env, 0), "db_env_create");
    check(env->set_cachesize(env, 0, 64u << 20, 1), "set_cachesize");
    check(env->set_lk_detect(env, DB_LOCK_DEFAULT), "set_lk_detect");
    check(env->open(env, argv[1],
                    DB_CREATE | DB_INIT_TXN | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_MPOOL |
                        DB_THREAD,
                    0644),
          "env open");
    check(db_create(&db, env, 0), "db_create");
    check(db->open(db, NULL, "tpcb.db", NULL, DB_BTREE, DB_CREATE | DB_AUTO_COMMIT | DB_THREAD,
                   0644),
          "db open");
    double t0 = now();
    load();
    fprintf(stderr, "lamina-bench tpcb: bdb: loaded %u rows in %.2f s\n",
            accounts + tellers + branches, now() - t0);
    uint32_t round = 0;
    for (char *p = strtok(argv[7], ","); p; p = strtok(NULL, ","), round++) {
        int threads = atoi(p);
        if (threads < 1) threads = 1;
        struct worker *ws = calloc((size_t)threads, sizeof *ws);
        uint64_t syncs0 = log_syncs(), w0 = write_bytes();
        double start = now();
        for (int i = 0; i < threads; i++) {
            ws[i].round = round;
            ws[i].thread = (uint32_t)i;
            ws[i].start = start;
            if (pthread_create(&ws[i].th, NULL, work, &ws[i]) != 0) {
                perror("pthread_create");
                return 1;
            }
        }
        uint64_t txns = 0, conflicts = 0, retried = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(ws[i].th, NULL);
            txns += ws[i].txns;
            conflicts += ws[i].conflicts;
            retried += ws[i].retried;
        }
        double secs = now() - start;
        uint64_t syncs = log_syncs() - syncs0, written = write_bytes() - w0;
        committed += txns;
        verdict(inv, sizeof inv, committed);
        printf("row,bdb,%d,%llu,%.6f,%llu,%llu,%llu,%llu,%s\n", threads, (unsigned long long)txns,
               secs, (unsigned long long)conflicts, (unsigned long long)retried,
               (unsigned long long)syncs, (unsigned long long)written, inv);
        fflush(stdout);
        free(ws);
    }
    check(db->close(db, 0), "db close");
    check(env->close(env, 0), "env close");
    if (!keep) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", argv[1]);
        if (system(cmd) != 0) return 1;
    }
    return 0;
}
