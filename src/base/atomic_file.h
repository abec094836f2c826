/* atomic_file.h — a file written whole or not at all (base/atomic_file.c):
 * the bytes go to a temporary file beside the path, which is fsynced and
 * renamed over it, and the rename is made durable; a failure at any point
 * removes the temporary and leaves the previous file as it was. The
 * checkpoint writer, the tokenizer's save, sessions and PEFT adapters' files
 * all write this way. */
#ifndef NGPT_BASE_ATOMIC_FILE_H
#define NGPT_BASE_ATOMIC_FILE_H

#include <limits.h>

#include "base/error.h"

/* Creates path.tmp.XXXXXX (its name into tmp) and opens it as *fd. */
ngpt_status ngpt_atomic_file_open(const char *path, char tmp[PATH_MAX], int *fd);

/* Ends what ngpt_atomic_file_open began and closes fd. With st == NGPT_OK
 * the temporary replaces path (fsync, rename, the directory synced);
 * otherwise, or when one of those fails, it is removed and the message
 * adds that the previous file is unchanged. Returns the outcome. */
ngpt_status ngpt_atomic_file_finish(int fd, const char *tmp, const char *path, ngpt_status st);

/* The n bytes of data as the file at path, the whole of it or nothing
 * (open, write, finish). */
ngpt_status ngpt_atomic_file_write(const char *path, const void *data, size_t n);

#endif
