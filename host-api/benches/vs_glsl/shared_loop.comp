// The twin of shared_generic.pisa and shared_direct.pisa:
// out[i] = fold of acc * 31 + S[(l + 7k) mod 256] for k < 64.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Words inp;
  layout(offset = 8) Words outp;
} p;
shared uint S[256];
void main() {
  uint l = gl_LocalInvocationID.x;
  uint i = gl_GlobalInvocationID.x;
  S[l] = p.inp.v[i];
  barrier();
  uint acc = 0;
  for (uint k = 0; k < 64; k++) {
    acc = acc * 31 + S[(k * 7 + l) & 255];
  }
  p.outp.v[i] = acc;
}
