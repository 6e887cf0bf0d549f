/*
 * Berkeley DB for `lamina-bench scale-reads`: a btree database opened,
 * loaded, read and closed through plain C functions that Rust calls
 * (bench/src/scale_reads/bdb_engine.rs). Berkeley DB's handles are
 * structures of function pointers, which Rust cannot call directly.
 *
 * The environment is private (DB_PRIVATE: its region lives in this
 * process's memory, so its cache counts against the process's memory
 * cap) and free-threaded (DB_THREAD), with a memory pool and no
 * transactions, locks or log: the load is one writer, the lookups are
 * readers of a file nothing writes. The database is one btree file,
 * `data.db`, of 4 KiB pages (the device's read size).
 *
 * Built by bench/build.rs where Debian's libdb5.3-dev is installed.
 */
#include <db.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lb_bdb {
    DB_ENV *env;
    DB *db;
};

/* Berkeley DB's words for error `code`. */
const char *lb_bdb_strerror(int code) { return db_strerror(code); }

/* The library's version string. */
const char *lb_bdb_version(void) { return db_version(NULL, NULL, NULL); }

/* Closes the database and the environment; the first error, or 0. */
int lb_bdb_close(struct lb_bdb *h) {
    int r = 0, r2;
    if (h == NULL) return 0;
    if (h->db != NULL) r = h->db->close(h->db, 0);
    if (h->env != NULL) {
        r2 = h->env->close(h->env, 0);
        if (r == 0) r = r2;
    }
    free(h);
    return r;
}

/*
 * Opens the database in directory `home`: created (for the load) when
 * `create` is non-zero, else read-only. `cache` bytes of memory pool.
 * On success *out is the handle and 0 is returned; else an error code.
 */
int lb_bdb_open(const char *home, int create, uint64_t cache, struct lb_bdb **out) {
    struct lb_bdb *h = calloc(1, sizeof *h);
    int r;
    if (h == NULL) return ENOMEM;
    *out = NULL;
    if ((r = db_env_create(&h->env, 0)) != 0) {
        free(h);
        return r;
    }
    r = h->env->set_cachesize(h->env, (u_int32_t)(cache >> 30),
                              (u_int32_t)(cache & ((1u << 30) - 1)), 1);
    if (r == 0)
        r = h->env->open(h->env, home, DB_CREATE | DB_INIT_MPOOL | DB_PRIVATE | DB_THREAD, 0);
    if (r == 0) r = db_create(&h->db, h->env, 0);
    if (r == 0 && create) r = h->db->set_pagesize(h->db, 4096);
    if (r == 0)
        r = h->db->open(h->db, NULL, "data.db", NULL, DB_BTREE,
                        (create ? DB_CREATE : DB_RDONLY) | DB_THREAD, 0644);
    if (r != 0) {
        lb_bdb_close(h);
        return r;
    }
    *out = h;
    return 0;
}

/* Puts one record; 0 or an error code. */
int lb_bdb_put(struct lb_bdb *h, const void *k, size_t klen, const void *v, size_t vlen) {
    DBT key, data;
    memset(&key, 0, sizeof key);
    memset(&data, 0, sizeof data);
    key.data = (void *)k;
    key.size = (u_int32_t)klen;
    data.data = (void *)v;
    data.size = (u_int32_t)vlen;
    return h->db->put(h->db, NULL, &key, &data, 0);
}

/*
 * Looks `k` up, copying its value into `buf` of `cap` bytes. Returns 0
 * or an error code; *found is 1 if the key is there, and then *vlen is
 * the value's length (more than `cap`: nothing was copied, call again
 * with room for it).
 */
int lb_bdb_get(struct lb_bdb *h, const void *k, size_t klen, void *buf, size_t cap,
               int *found, size_t *vlen) {
    DBT key, data;
    int r;
    memset(&key, 0, sizeof key);
    memset(&data, 0, sizeof data);
    key.data = (void *)k;
    key.size = (u_int32_t)klen;
    data.data = buf;
    data.ulen = (u_int32_t)cap;
    data.flags = DB_DBT_USERMEM;
    r = h->db->get(h->db, NULL, &key, &data, 0);
    *found = 0;
    *vlen = 0;
    if (r == DB_NOTFOUND) return 0;
    if (r == 0 || r == DB_BUFFER_SMALL) {
        *found = 1;
        *vlen = data.size;
        return 0;
    }
    return r;
}

/* Writes every dirty page of the database to its file; 0 or an error code. */
int lb_bdb_sync(struct lb_bdb *h) { return h->db->sync(h->db, 0); }
