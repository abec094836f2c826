/* test_kernels.c — every kernel of the list (src/kernels.inc), the active
 * table against the reference, bit for bit, on every test shape of its case
 * (kcases/<op>.c): odd sizes (tails), tile edges, k past packing
 * limits, NaN rows, subnormals, in-place calls, long dropout rows at large
 * offsets; and where a case writes the kernel's definition out, the
 * reference against it. In the scalar build both tables are the reference:
 * then it checks the wiring and the definitions. The bench checks its model
 * shapes the same way before it times them (too large for the qemu runs).
 *
 * Each case runs against a table that holds only its own kernel, so a case
 * that calls another kernel crashes here (on a NULL field) instead of
 * testing the wrong thing; a case whose run changes nothing fails. */
#include "kcase.h"
#include "test.h"

/* A copy of `from` with every kernel but `kernel` NULL. */
static ngpt_kernels only(const ngpt_kernels *from, const char *kernel)
{
    ngpt_kernels t = {.name = from->name};
#define NGPT_KERNEL(k, ...) if (!strcmp(kernel, #k)) t.k = from->k;
#include "kernels.inc"
    return t;
}

/* Whether got holds the bits of want; unless printed is NULL, prints the
 * first difference (for the first few shapes that differ). */
static bool same(const kc_entry *e, const char *what, const kc_state *got, const kc_state *want, int *printed)
{
    int slot;
    size_t i;
    if (kc_same(got, want, &slot, &i)) return true;
    if (printed && (*printed)++ < 5) {
        char shape[128];
        kc_format(shape, sizeof shape, e->c, &want->shape);
        fprintf(stderr, "%s(%s) %s: slot %d element %zu: %a vs %a\n", e->kernel, shape, what, slot, i,
                (double)got->buf[slot][i], (double)want->buf[slot][i]);
    }
    return false;
}

static void check_kernel(const kc_entry *e, int *total)
{
    const ngpt_kernels ref = only(&ngpt_kernels_ref, e->kernel);
    const ngpt_kernels act = only(&ngpt_kernels_active, e->kernel);
    kc_shapes shapes = {0};
    e->c->test_shapes(&shapes);
    int bad = 0, printed = 0, changed = 0;
    for (int i = 0; i < shapes.count; i++) {
        kc_state want = {.shape = shapes.at[i]}, got = want, before = want;
        e->c->setup(&want), e->c->setup(&got);
        if (!changed) e->c->setup(&before);
        e->c->run(&want, &ref);
        e->c->run(&got, &act);
        bad += !same(e, "active vs reference", &got, &want, &printed);
        if (!changed) changed = !same(e, "", &want, &before, NULL);
        if (e->c->definition) {
            kc_state def = {.shape = shapes.at[i]};
            e->c->setup(&def);
            e->c->definition(&def);
            bad += !same(e, "reference vs definition", &want, &def, &printed);
            kc_free(&def);
        }
        kc_free(&before), kc_free(&want), kc_free(&got);
    }
    CHECK(shapes.count > 0, "%s: its case has no shapes", e->kernel);
    CHECK(changed > 0, "%s: its case never changes a buffer", e->kernel);
    CHECK(bad == 0, "%s: %d of %d shapes differ", e->kernel, bad, shapes.count);
    *total += shapes.count;
    free(shapes.at);
}

int main(void)
{
    CHECK(ngpt_kernels_active.name != NULL && ngpt_kernels_ref.name != NULL, "tables are named");
    int shapes = 0;
    for (int i = 0; i < kc_count; i++) check_kernel(&kc_all[i], &shapes);
    printf("kernels: %s vs %s, %d kernels, %d shapes\n", ngpt_kernels_active.name, ngpt_kernels_ref.name,
           kc_count, shapes);
    return test_summary("test_kernels");
}
