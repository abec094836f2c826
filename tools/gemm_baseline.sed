s/ngpt_f32_gemm_ref/ngpt_base_gemm_ref/g
s/ngpt_f32_gemm__[a-z0-9]*/ngpt_base_gemm/g
s/#include "\(\.\.\/kernels\.h\|kernels_avx2\.h\|kernels_avx512\.h\|kernels_neon\.h\)"/#include "gemm_baseline.h"/
