// out[group] = the (wrapping) sum of the group's 256 inputs: a tree in shared memory.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Words inp;
  layout(offset = 8) Words outp;
} p;
shared uint buf[256];
void main() {
  uint l = gl_LocalInvocationID.x;
  buf[l] = p.inp.v[gl_GlobalInvocationID.x];
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
    if (l < s) buf[l] += buf[l + s];
    barrier();
  }
  if (l == 0) p.outp.v[gl_WorkGroupID.x] = buf[0];
}
