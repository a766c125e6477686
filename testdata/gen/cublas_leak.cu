// Issue 13. Calls cublasCreate, does one SGEMM, frees its own buffers, and never calls
// cublasDestroy: what the library allocated inside the handle is left to the sanitizer's
// leak check.
#include <cstdio>
#include <cuda_runtime.h>
#include <cublas_v2.h>

int main() {
  const int n = 512;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudaMalloc(&a, n * n * sizeof(float));
  cudaMalloc(&b, n * n * sizeof(float));
  cudaMalloc(&c, n * n * sizeof(float));
  cudaMemset(a, 0, n * n * sizeof(float));
  cudaMemset(b, 0, n * n * sizeof(float));
  cublasHandle_t h;
  cublasStatus_t st = cublasCreate(&h);  // never destroyed
  if (st != CUBLAS_STATUS_SUCCESS) { printf("cublasCreate failed %d\n", (int)st); return 1; }
  const float one = 1.0f, zero = 0.0f;
  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cudaDeviceSynchronize();
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  printf("done\n");
  return 0;  // no cublasDestroy(h)
}
