// C = A * B for n x n row-major f32 matrices, 16x16 tiles in shared memory, acc + a * b.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Floats a;
  layout(offset = 8) Floats b;
  layout(offset = 16) Floats c;
  layout(offset = 24) uint n;
} p;
shared float ta[16][16];
shared float tb[16][16];
void main() {
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  uint col = gl_WorkGroupID.x * 16 + lx, row = gl_WorkGroupID.y * 16 + ly;
  float acc = 0.0;
  for (uint t = 0; t < p.n; t += 16) {
    ta[ly][lx] = p.a.v[row * p.n + t + lx];
    tb[ly][lx] = p.b.v[(t + ly) * p.n + col];
    barrier();
    for (uint k = 0; k < 16; k++) {
      acc = acc + ta[ly][k] * tb[k][lx];
    }
    barrier();
  }
  p.c.v[row * p.n + col] = acc;
}
