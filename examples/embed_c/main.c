/* Embedding tilert in a C99 program: load a module, run scale_add (y = a * x + y) on the best
 * device, and check the result against the same math computed here.
 *
 *   embed_c [MODULE]     MODULE: a .tbc compiled by `tilert compile`, or the .tile source itself
 *                        (default: scale_add.tbc in the current directory)
 *
 * Prints PASS or FAIL; exits 0 on PASS, 1 otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <tilert/tilert.h>

#define N 1000 /* not a multiple of the kernel's 256-element tile: the last block is partial */

/* On failure: print the call, its status and message, and jump to cleanup. */
#define CHECK(call)                                                                          \
  do {                                                                                       \
    tilert_status status_ = (call);                                                          \
    if (status_ != TILERT_OK) {                                                              \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tilert_status_name(status_),             \
              tilert_last_error());                                                          \
      goto cleanup;                                                                          \
    }                                                                                        \
  } while (0)

/* Deterministic inputs in [-1, 1) from a linear congruential generator. */
static float next_random(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
}

int main(int argc, char** argv) {
  const char* module_path = argc > 1 ? argv[1] : "scale_add.tbc";
  const float a = 2.5f;
  static float x[N], y[N], result[N];
  int passed = 0;
  tilert_context context = NULL;
  tilert_device device = NULL;
  tilert_module module = NULL;
  tilert_kernel kernel = NULL;
  tilert_buffer x_buffer = NULL, y_buffer = NULL;
  tilert_stream stream = NULL;
  tilert_device_info info;
  uint32_t seed = 12345u;
  int64_t shape[1] = {N};
  tilert_arg args[4];
  int i, mismatches = 0;

  for (i = 0; i < N; ++i) {
    x[i] = next_random(&seed);
    y[i] = next_random(&seed);
  }

  CHECK(tilert_context_create(&context));
  CHECK(tilert_device_find(context, "auto", &device));
  CHECK(tilert_device_get_info(device, &info));
  printf("device: %s (%s)\n", info.name, info.driver);

  CHECK(tilert_module_load_file(context, device, module_path, &module));
  CHECK(tilert_kernel_get(module, "scale_add", &kernel));

  CHECK(tilert_buffer_create(context, device, sizeof x, &x_buffer));
  CHECK(tilert_buffer_create(context, device, sizeof y, &y_buffer));
  CHECK(tilert_buffer_upload(x_buffer, 0, x, sizeof x));
  CHECK(tilert_buffer_upload(y_buffer, 0, y, sizeof y));
  CHECK(tilert_stream_create(context, device, &stream));

  args[0] = tilert_arg_tensor(x_buffer, TILERT_F32, 1, shape);
  args[1] = tilert_arg_tensor(y_buffer, TILERT_F32, 1, shape);
  args[2] = tilert_arg_float(a);
  args[3] = tilert_arg_int(N);
  CHECK(tilert_launch(kernel, stream, args, 4));
  CHECK(tilert_stream_sync(stream));
  CHECK(tilert_buffer_download(y_buffer, 0, result, sizeof result));

  for (i = 0; i < N; ++i) {
    float expected = a * x[i] + y[i];
    if (fabsf(result[i] - expected) > 1e-5f * (1.0f + fabsf(expected))) {
      if (mismatches < 5) {
        fprintf(stderr, "y[%d] = %.9g, expected %.9g\n", i, result[i], expected);
      }
      ++mismatches;
    }
  }
  passed = mismatches == 0;
  if (!passed) fprintf(stderr, "%d of %d elements differ\n", mismatches, N);

cleanup:
  tilert_stream_destroy(stream);
  tilert_buffer_destroy(y_buffer);
  tilert_buffer_destroy(x_buffer);
  tilert_module_destroy(module);
  tilert_context_destroy(context);
  printf("%s\n", passed ? "PASS" : "FAIL");
  return passed ? 0 : 1;
}
