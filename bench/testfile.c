/* "testfile": the hardware's limit on durable commits.
 *
 * Per op: write(fd, <bytes> zero bytes), lseek(fd, 0, SEEK_SET), fsync(fd); <ops> ops;
 * ops/s = ops / seconds. Prints the original program's lines:
 *   running: 1000 ops
 *   Elapsed time: 0.171234 seconds
 *   1000 ops: 5839.97 ops per second
 *
 * With -a, the loop of a log instead: the file is first zero-filled for every
 * op and synced, then each op is pwrite(fd, <bytes>, offset) at increasing
 * offsets + fdatasync(fd) (an append that changes no file size, as a WAL
 * segment zero-filled ahead).
 *
 * usage: testfile [-a] [-b bytes] [-o ops] [-f file]     (defaults 256, 1000, ./testfile.data)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long bytes = 256, ops = 1000;
    int append = 0;
    const char *path = "testfile.data";
    int c;
    while ((c = getopt(argc, argv, "ab:o:f:")) != -1) {
        switch (c) {
        case 'a': append = 1; break;
        case 'b': bytes = atol(optarg); break;
        case 'o': ops = atol(optarg); break;
        case 'f': path = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-a] [-b bytes] [-o ops] [-f file]\n", argv[0]);
            return 2;
        }
    }
    if (bytes <= 0 || ops <= 0) {
        fprintf(stderr, "testfile: -b and -o must be positive\n");
        return 2;
    }
    char *buf = calloc(1, (size_t)bytes);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (buf == NULL || fd < 0) {
        perror(path);
        return 1;
    }
    if (append) {
        for (long i = 0; i < ops; i++) {
            if (write(fd, buf, (size_t)bytes) != (ssize_t)bytes) { perror("write"); return 1; }
        }
        if (fsync(fd) != 0) { perror("fsync"); return 1; }
    }
    printf("running: %ld ops%s\n", ops, append ? " (append, fdatasync)" : "");
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    for (long i = 0; i < ops; i++) {
        if (append) {
            if (pwrite(fd, buf, (size_t)bytes, (off_t)(i * bytes)) != (ssize_t)bytes) { perror("pwrite"); return 1; }
            if (fdatasync(fd) != 0) { perror("fdatasync"); return 1; }
            continue;
        }
        if (write(fd, buf, (size_t)bytes) != (ssize_t)bytes) { perror("write"); return 1; }
        if (lseek(fd, 0, SEEK_SET) != 0) { perror("lseek"); return 1; }
        if (fsync(fd) != 0) { perror("fsync"); return 1; }
    }
    gettimeofday(&t1, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_usec - t0.tv_usec);
    printf("Elapsed time: %f seconds\n", secs);
    printf("%ld ops: %.2f ops per second\n", ops, (double)ops / secs);
    close(fd);
    unlink(path);
    free(buf);
    return 0;
}
