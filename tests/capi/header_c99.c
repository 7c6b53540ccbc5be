/* faultline.h compiles as strict C99 on its own. */
#include <faultline/faultline.h>

int main(void) {
  fl_session_options o = FL_SESSION_OPTIONS_INIT;
  return (int)(o.size == 0) + (FL_VERSION_NUMBER < 0);
}
