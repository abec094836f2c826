/* checksum.c — the XXH3-64 checksum every golden constant is made of. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/fpmode.h"
#include "ngpt.h"

uint64_t ngpt_checksum_bytes(const void *data, size_t bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!data && bytes) return 0;   /* no status to return: 0, never a NULL read */
    return (uint64_t)XXH3_64bits(data, bytes);
}
