s/ngpt_f32_\([a-z0-9_]*\)_ref\b/ngpt_base_\1_ref/g
s/ngpt_f32_\([a-z0-9_]*\)__[a-z0-9]*/ngpt_base_\1/g
s/#include "\(\.\.\/kernels\.h\|kernels_avx2\.h\|kernels_avx512\.h\|kernels_neon\.h\)"/#include "gemm_baseline.h"/
