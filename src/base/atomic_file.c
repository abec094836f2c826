/* atomic_file.c — a file written whole or not at all (atomic_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"

ngpt_status ngpt_atomic_file_open(const char *path, char tmp[PATH_MAX], int *fd)
{
    if (snprintf(tmp, PATH_MAX, "%s.tmp.XXXXXX", path) >= PATH_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "the path %s is too long", path);
    *fd = mkstemp(tmp);
    if (*fd < 0)
        return ngpt_fail(NGPT_ERR_IO, "cannot create a temporary file beside %s: %s", path,
                         strerror(errno));
    return NGPT_OK;
}

/* Makes a finished rename durable: fsync of the directory that holds path. */
static void sync_directory(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

ngpt_status ngpt_atomic_file_finish(int fd, const char *tmp, const char *path, ngpt_status st)
{
    if (!st && fchmod(fd, 0644) != 0) (void)0;  /* best effort: mkstemp made it 0600 */
    if (!st && fsync(fd) != 0)
        st = ngpt_fail(NGPT_ERR_IO, "fsync of %s failed: %s", tmp, strerror(errno));
    if (close(fd) != 0 && !st)
        st = ngpt_fail(NGPT_ERR_IO, "closing %s failed: %s", tmp, strerror(errno));
    if (!st && rename(tmp, path) != 0)
        st = ngpt_fail(NGPT_ERR_IO, "renaming %s to %s failed: %s", tmp, path, strerror(errno));
    if (st) {
        char keep[512];
        snprintf(keep, sizeof keep, "%s", ngpt_last_error());
        unlink(tmp);
        return ngpt_fail(st, "%s; the previous %s is unchanged", keep, path);
    }
    sync_directory(path);
    return NGPT_OK;
}

ngpt_status ngpt_atomic_file_write(const char *path, const void *data, size_t n)
{
    char tmp[PATH_MAX];
    int fd;
    ngpt_status st = ngpt_atomic_file_open(path, tmp, &fd);
    if (st) return st;
    for (size_t done = 0; done < n && !st;) {
        ssize_t w = write(fd, (const unsigned char *)data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            st = ngpt_fail(NGPT_ERR_IO, "writing %s failed: %s", tmp,
                           w < 0 ? strerror(errno) : "no progress (is the disk full?)");
        else
            done += (size_t)w;
    }
    return ngpt_atomic_file_finish(fd, tmp, path, st);
}
