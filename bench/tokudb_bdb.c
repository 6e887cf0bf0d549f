/* TokuDB's db-insert and db-update on Berkeley DB 5.3, in C (no binding cost per call).
 * The workloads are bench/README.md's; bench/tokudb_bdb.py runs this (`--impl c`) and the same
 * workloads through the Python binding, and prints the same columns.
 *
 *   tokudb_bdb insert DIR BATCHES BATCH_SIZE CACHESIZE TXN(0|1) BOUNDED(0|1) SEED
 *   tokudb_bdb update DIR OPS CACHESIZE OPS_PER_COMMIT REPORT_EVERY SEED [MAX_SECONDS]
 *
 * insert: 8-byte big-endian keys, value = the key's bytes; per batch BATCH_SIZE serial keys
 * (i * 64, i continuing across batches) then BATCH_SIZE random 64-bit keys (BOUNDED: below the
 * serial keys' bound, (i + BATCH_SIZE) * 64); TXN: a durable commit every 16,384 puts.
 * update: key = two 4-byte big-endian ints, each random() % 1,000,000; value = 8-byte
 * little-endian counter; get + put adds 1; a durable commit every OPS_PER_COMMIT ops;
 * with MAX_SECONDS, stops at the first report past that time.
 */
#include <db.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define SERIAL_SPACING 64
#define PUTS_PER_TXN 16384

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(int r, const char *what) {
    if (r != 0) {
        fprintf(stderr, "%s: %s\n", what, db_strerror(r));
        exit(1);
    }
}

/* xorshift64*: a fast 64-bit generator, so that making keys costs next to nothing */
static uint64_t rng_state;
static uint64_t rnd64(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void be64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static DB_ENV *open_env(const char *dir, uint64_t cachesize, int txn) {
    DB_ENV *env;
    mkdir(dir, 0755);
    check(db_env_create(&env, 0), "db_env_create");
    check(env->set_cachesize(env, (uint32_t)(cachesize >> 30),
                             (uint32_t)(cachesize & ((1u << 30) - 1)), 1), "set_cachesize");
    if (txn) {
        check(env->set_lk_max_locks(env, PUTS_PER_TXN * 2), "set_lk_max_locks");
        check(env->set_lk_max_objects(env, PUTS_PER_TXN * 2), "set_lk_max_objects");
    }
    uint32_t flags = DB_CREATE | DB_PRIVATE | DB_INIT_MPOOL;
    if (txn) flags |= DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK;
    check(env->open(env, dir, flags, 0644), "env open");
    return env;
}

static DB *open_db(DB_ENV *env, const char *name, int txn) {
    DB *db;
    DB_TXN *t = NULL;
    check(db_create(&db, env, 0), "db_create");
    if (txn) check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
    check(db->open(db, t, name, NULL, DB_BTREE, DB_CREATE, 0644), "db open");
    if (txn) check(t->commit(t, 0), "commit");
    return db;
}

static int cmd_insert(int argc, char **argv) {
    if (argc != 9) return 2;
    const char *dir = argv[2];
    long batches = atol(argv[3]), batch = atol(argv[4]);
    uint64_t cachesize = strtoull(argv[5], NULL, 10);
    int txn = atoi(argv[6]), bounded = atoi(argv[7]);
    rng_state = strtoull(argv[8], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
    DB_ENV *env = open_env(dir, cachesize, txn);
    DB *db = open_db(env, "bench.db", txn);
    printf("serial and random insertions of %ld per batch%s [Berkeley DB %d.%d.%d in C, cache %llu B, "
           "random keys %s]\n", batch, txn ? " (with transactions)" : "", DB_VERSION_MAJOR,
           DB_VERSION_MINOR, DB_VERSION_PATCH, (unsigned long long)cachesize,
           bounded ? "bounded" : "64-bit");
    fflush(stdout);
    unsigned char kb[8];
    DBT k, v;
    memset(&k, 0, sizeof k);
    memset(&v, 0, sizeof v);
    k.data = v.data = kb;
    k.size = v.size = 8;
    DB_TXN *t = NULL;
    long in_txn = 0;
    double start = now();
    for (long it = 0; it < batches; it++) {
        for (int phase = 0; phase < 2; phase++) {
            double t1 = now();
            if (txn) check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
            uint64_t bound = (uint64_t)(it + 1) * (uint64_t)batch * SERIAL_SPACING;
            for (long i = 0; i < batch; i++) {
                uint64_t key = phase == 0 ? ((uint64_t)(it * batch + i)) * SERIAL_SPACING
                                          : (bounded ? (rnd64() >> 1) % bound : rnd64());
                be64(kb, key);
                check(db->put(db, t, &k, &v, 0), "put");
                if (txn && ++in_txn >= PUTS_PER_TXN) {
                    check(t->commit(t, 0), "commit");
                    check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
                    in_txn = 0;
                }
            }
            if (txn) {
                check(t->commit(t, 0), "commit");
                t = NULL;
            }
            double t2 = now();
            printf("%s %9.6fs %8.0f/s    ", phase == 0 ? "serial" : "random", t2 - t1,
                   (double)batch / (t2 - t1));
            if (phase == 1)
                printf("cumulative %9.6fs %8.0f/s\n", t2 - start,
                       2.0 * (double)batch * (double)(it + 1) / (t2 - start));
            fflush(stdout);
        }
    }
    double t2 = now();
    check(db->close(db, 0), "db close");
    check(env->close(env, 0), "env close");
    double t3 = now();
    long long total = 2LL * batch * batches;
    printf("Shutdown %9.6fs\n", t3 - t2);
    printf("Total time %9.6fs for %lld insertions = %8.0f/s\n", t3 - start, total,
           (double)total / (t3 - start));
    return 0;
}

static int cmd_update(int argc, char **argv) {
    if (argc != 8 && argc != 9) return 2;
    const char *dir = argv[2];
    long ops = atol(argv[3]);
    double max_seconds = argc == 9 ? atof(argv[8]) : 0;
    uint64_t cachesize = strtoull(argv[4], NULL, 10);
    long per_commit = atol(argv[5]), report = atol(argv[6]);
    srandom((unsigned)atol(argv[7]));
    DB_ENV *env = open_env(dir, cachesize, 1);
    DB *db = open_db(env, "update.db", 1);
    printf("db-update: Berkeley DB %d.%d.%d in C, get + put, %ld ops per durable commit, "
           "cache %llu B\n", DB_VERSION_MAJOR, DB_VERSION_MINOR, DB_VERSION_PATCH, per_commit,
           (unsigned long long)cachesize);
    fflush(stdout);
    unsigned char kb[8], vb[8], ob[8];
    DBT k, v, o;
    memset(&k, 0, sizeof k);
    memset(&v, 0, sizeof v);
    memset(&o, 0, sizeof o);
    k.data = kb; k.size = 8;
    v.data = vb; v.size = 8;
    o.data = ob; o.ulen = 8; o.flags = DB_DBT_USERMEM;
    DB_TXN *t;
    check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
    long in_txn = 0;
    double start = now(), last = start;
    for (long i = 0; i < ops; i++) {
        uint32_t a = (uint32_t)(random() % 1000000), b = (uint32_t)(random() % 1000000);
        for (int j = 0; j < 4; j++) {
            kb[j] = (unsigned char)(a >> (24 - 8 * j));
            kb[4 + j] = (unsigned char)(b >> (24 - 8 * j));
        }
        uint64_t c = 0;
        int r = db->get(db, t, &k, &o, 0);
        if (r == 0 && o.size == 8) {
            for (int j = 0; j < 8; j++) c |= (uint64_t)ob[j] << (8 * j);
        } else if (r != DB_NOTFOUND) {
            check(r, "get");
        }
        c += 1;
        for (int j = 0; j < 8; j++) vb[j] = (unsigned char)(c >> (8 * j));
        check(db->put(db, t, &k, &v, 0), "put");
        if (++in_txn == per_commit) {
            check(t->commit(t, 0), "commit");
            check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
            in_txn = 0;
        }
        if ((i + 1) % report == 0) {
            double n = now();
            printf("%ld %.3f %.0f/s %.0f/s\n", i + 1, n - last, (double)report / (n - last),
                   (double)(i + 1) / (n - start));
            fflush(stdout);
            last = n;
            if (max_seconds > 0 && n - start > max_seconds) {
                ops = i + 1;
                printf("stopped after %.0f s (--max-seconds)\n", n - start);
                break;
            }
        }
    }
    check(t->commit(t, 0), "commit");
    double n = now();
    printf("total %ld %.3f %.0f/s\n", ops, n - start, (double)ops / (n - start));
    check(db->close(db, 0), "db close");
    check(env->close(env, 0), "env close");
    return 0;
}

int main(int argc, char **argv) {
    int r = 2;
    if (argc > 1 && strcmp(argv[1], "insert") == 0) r = cmd_insert(argc, argv);
    else if (argc > 1 && strcmp(argv[1], "update") == 0) r = cmd_update(argc, argv);
    if (r == 2)
        fprintf(stderr, "usage: tokudb_bdb insert DIR BATCHES BATCH_SIZE CACHESIZE TXN BOUNDED SEED\n"
                        "       tokudb_bdb update DIR OPS CACHESIZE OPS_PER_COMMIT REPORT_EVERY SEED [MAX_SECONDS]\n");
    return r;
}
