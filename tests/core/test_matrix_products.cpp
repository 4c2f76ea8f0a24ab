// Which library does core's matrix products (core/parallel/parallel.hpp), and OpenBLAS's own threads held
// to one when it is that library (STEPFORMER_BLAS, the default): compute_threads() alone splits a product.
#include <gtest/gtest.h>

#include <string>

#include "core/parallel/parallel.hpp"

#ifdef STEPFORMER_BLAS
extern "C" int openblas_get_num_threads();
#endif

namespace test_matrix_products {

using namespace sf;

TEST(MatrixProducts, LibraryIsNamedAndOpenBlasKeepsOneThread) {
  const std::string lib = matrix_product_library();
#ifdef STEPFORMER_BLAS
  EXPECT_EQ(lib.rfind("OpenBLAS", 0), 0u) << lib;  // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH …"
  EXPECT_NE(lib.find("held to one"), std::string::npos) << lib;
  // core/parallel/parallel.cpp sets it when the program starts, whatever OPENBLAS_NUM_THREADS or the CPU says.
  EXPECT_EQ(openblas_get_num_threads(), 1);
#else
  EXPECT_EQ(lib.rfind("Eigen ", 0), 0u) << lib;
#endif
}

}  // namespace test_matrix_products
