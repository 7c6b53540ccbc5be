// faultline.h compiles as pedantic C++ too.
#include <faultline/faultline.h>

int main() {
  fl_session_options o = FL_SESSION_OPTIONS_INIT;
  return static_cast<int>(o.size == 0);
}
