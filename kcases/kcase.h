/* kcase.h — one case per kernel of src/kernels.inc, in kcases/<op>.c
 * (the op file of the list). A case makes deterministic inputs for a shape
 * and runs its kernel from a given table; two programs are made of them:
 *   tests/test_kernels.c  each test shape with the reference and with the
 *                         active table, every buffer compared bit for bit
 *   ngpt bench            the active table timed at the default model's shapes
 *                         (bench/kernel_bench.c)
 * The list of cases is generated from the list of kernels (kcase_list.c): a kernel
 * without a case `kc_<kernel>` does not link. */
#ifndef NGPT_KCASE_H
#define NGPT_KCASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* A shape: up to five integers, named by the case's `dims`. */
typedef struct kc_shape {
    int64_t v[5];
} kc_shape;

/* Inputs and outputs of one run: a case puts each argument array in a slot.
 * After a run every slot is compared, so a kernel that writes where it must
 * not (an input, the padding of a strided output) is caught as well. */
enum { KC_SLOTS = 8 };
typedef struct kc_state {
    kc_shape shape;
    float *buf[KC_SLOTS];
    size_t len[KC_SLOTS];
    double flops, bytes;        /* one run's work (the bench's rates); 0: not counted */
} kc_state;

/* A growing list of shapes (kc_add_shape). */
typedef struct kc_shapes {
    kc_shape *at;
    int count, cap;
} kc_shapes;

typedef struct kc_case {
    const char *dims;                           /* names of v[0..], e.g. "m n k layout" */
    void (*test_shapes)(kc_shapes *out);        /* the differential test's shapes */
    void (*bench_shapes)(kc_shapes *out);       /* the default model's shapes */
    void (*setup)(kc_state *st);                /* fills the slots for st->shape */
    void (*run)(kc_state *st, const ngpt_kernels *t);   /* one call of the kernel */
    /* Optional: the kernel's definition written out (one chain per output),
     * which the reference must match too. */
    void (*definition)(kc_state *st);
} kc_case;

/* The cases of the list's kernels, in its order (kcase_list.c). */
typedef struct kc_entry {
    const char *kernel, *op;
    const kc_case *c;
} kc_entry;
extern const kc_entry kc_all[];
extern const int kc_count;

#define NGPT_KERNEL(kernel, ...) extern const kc_case kc_##kernel;
#include "kernels.inc"

/* Value i of the shape, as an int or a size. */
static inline int kc_int(const kc_state *st, int i) { return (int)st->shape.v[i]; }
static inline size_t kc_size(const kc_state *st, int i) { return (size_t)st->shape.v[i]; }

/* kc_add_shape(out, a, b, ...): appends the shape {a, b, ...} (missing values 0). */
#define kc_add_shape(out, ...) kc_push((out), (kc_shape){{__VA_ARGS__}})
void kc_push(kc_shapes *out, kc_shape s);

/* The odd row lengths every row kernel is tested on (tails of 4 and 8). */
extern const int kc_sizes[];
extern const int kc_nsizes;

/* Slot `slot` of st: n reproducible values in [-scale, scale), a function of
 * (shape, slot) only, so two setups of one shape hold the same bits. */
float *kc_rand(kc_state *st, int slot, size_t n, float scale);
float *kc_zeros(kc_state *st, int slot, size_t n);
/* The subnormal cases (docs/DETERMINISM.md): like kc_rand, but every fourth
 * value is an exact subnormal (or zero) and the others are times `scale`
 * (0x1p-63f: their products are subnormal). */
float *kc_tiny(kc_state *st, int slot, size_t n, float scale);

/* KC_BAND_A * KC_BAND_B = 0x1.fffffffffff8p-127 exactly: below FLT_MIN before
 * rounding, FLT_MIN after. The canonical math (IEEE) gives FLT_MIN; an ARM
 * flush gives 0, so a case that starts a chain with this product checks
 * that a flush of a result which IEEE rounds up to a normal is caught. */
#define KC_BAND_A 0x1.000002p-64f
#define KC_BAND_B 0x1.fffffcp-63f
/* n cosine/sine pairs of unit length (RoPE tables): c -> slot, s -> slot + 1. */
void kc_rotations(kc_state *st, int slot, size_t n);
void kc_free(kc_state *st);

/* Whether every slot of a holds the bits of b; if not, the first difference
 * is at element *index of slot *slot. */
bool kc_same(const kc_state *a, const kc_state *b, int *slot, size_t *index);
/* "m=256 n=768 k=256 layout=4": the shape with the case's dims. */
void kc_format(char *out, size_t size, const kc_case *c, const kc_shape *s);

#endif
