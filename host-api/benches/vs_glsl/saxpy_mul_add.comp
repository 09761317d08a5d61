// y[i] = a * x[i] + y[i] for i < n.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Floats x;
  layout(offset = 8) Floats y;
  layout(offset = 16) float a;
  layout(offset = 24) uint n;
} p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.n) return;
  p.y.v[i] = p.a * p.x.v[i] + p.y.v[i];
}
