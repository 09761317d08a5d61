// out = transpose(in) for an n x n matrix of 32-bit words, through a 16x17 shared tile.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Words inp;
  layout(offset = 8) Words outp;
  layout(offset = 16) uint n;
} p;
shared uint T[16][17];
void main() {
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  uint gx = gl_WorkGroupID.x, gy = gl_WorkGroupID.y, n = p.n;
  T[ly][lx] = p.inp.v[(gy * 16 + ly) * n + gx * 16 + lx];
  barrier();
  p.outp.v[(gx * 16 + ly) * n + gy * 16 + lx] = T[lx][ly];
}
