// stepformer: the desktop app. Opens a window (GLFW + OpenGL), runs the ImGui frame loop,
// and supports scripted runs for tests: --frames, --actions, --screenshot.
#include <glad/gl.h>
// glad first, then GLFW (which must not include its own GL header).
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "app/app.hpp"
#include "app/classroom/session_feature.hpp"
#include "app/feature.hpp"
#include "app/frame_bench.hpp"
#include "app/gui_support.hpp"
#include "app/monkey.hpp"
#include "app/options.hpp"
#include "app/script_runner.hpp"
#include "app/ui_probe.hpp"
#include "backends/imgui_impl_glfw.h"
#include "backends/imgui_impl_opengl3.h"
#include "core/about/build_info.hpp"
#include "imgui.h"

namespace {

sf::App* g_app = nullptr;

void on_drop(GLFWwindow*, int count, const char** paths) {
  if (g_app && count > 0) g_app->open_model(paths[0]);
}

// The window moved to a monitor of another content scale (HiDPI): text and spacing follow it,
// unless --scale fixed it.
void on_content_scale(GLFWwindow*, float xscale, float) {
  if (!g_app || g_app->ui.content_scale_forced || xscale == g_app->ui.content_scale) return;
  g_app->ui.content_scale = std::clamp(xscale, 1.0f, 4.0f);
  g_app->ui.font_dirty = true;
}

void on_glfw_error(int code, const char* text) {
  if (g_app) return;  // before the window exists, main() reports the failure itself
  (void)code;
  (void)text;
}

// Tries OpenGL 4.3 core (compute shaders); falls back to 3.3 core for the UI alone.
GLFWwindow* open_window(const sf::AppOptions& opt, bool& gl43) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* w = opt.gl33 ? nullptr : glfwCreateWindow(opt.width, opt.height, "Stepformer", nullptr, nullptr);
  gl43 = w != nullptr;
  if (!w) {
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    w = glfwCreateWindow(opt.width, opt.height, "Stepformer", nullptr, nullptr);
  }
  return w;
}

// The app runs for a school day: memory it frees goes back to the system. glibc's defaults let each
// thread's arena keep up to 2× its dynamic mmap threshold (up to 64 MiB) of free memory at its top, and
// raise that threshold after every large block: the trace and training threads then hold several MiB of
// freed matrices each, for hours. Fixed thresholds instead: a block of 2 MiB or more gets its own
// mapping, unmapped when freed, and an arena's free top beyond 2 MiB is returned on the next free.
// (Measured in docs/soak.md; the compute is unaffected, a 2 MiB matrix costs far more to fill than
// its page faults.)
void return_freed_memory_to_the_system() {
  mallopt(M_MMAP_THRESHOLD, 2 << 20);
  mallopt(M_TRIM_THRESHOLD, 2 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  return_freed_memory_to_the_system();
  sf::AppOptions opt;
  std::string error;
  if (!sf::parse_app_options(argc, argv, opt, error)) {
    std::fprintf(stderr, "stepformer: error: %s\n", error.c_str());
    return 2;
  }
  if (opt.help) {
    std::fputs(sf::app_usage(), stdout);
    return 0;
  }
  if (opt.version) {
    std::fputs(sf::version_text("stepformer").c_str(), stdout);
    return 0;
  }
  glfwSetErrorCallback(on_glfw_error);
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland)) {
    std::fprintf(stderr,
                 "stepformer: error: no display (DISPLAY is not set): run it under `xvfb-run -a build/app/stepformer`, "
                 "or set DISPLAY; the command line `stepformer-cli` works without one\n");
    return 1;
  }
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "stepformer: error: cannot open the display \"%s\": run it under `xvfb-run -a build/app/stepformer`, "
                 "or set DISPLAY to a running X server\n",
                 display ? display : "");
    return 1;
  }
  bool gl43 = false;
  GLFWwindow* window = open_window(opt, gl43);
  if (!window) {
    std::fprintf(stderr,
                 "stepformer: error: this display offers neither OpenGL 4.3 nor 3.3 core; install Mesa "
                 "(libgl1-mesa-dri) or update the graphics driver\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(opt.frames > 0 || opt.monkey.active() ? 0 : 1);
  const int glv = gladLoadGL(glfwGetProcAddress);
  if (!glv) gl43 = false;

  sf::App app;
  g_app = &app;
  app.window = window;
  app.ui.gl43 = gl43 && GLAD_VERSION_MAJOR(glv) * 10 + GLAD_VERSION_MINOR(glv) >= 43;
  app.ui.gl_version = reinterpret_cast<const char*>(glGetString(GL_VERSION) ? glGetString(GL_VERSION)
                                                                             : reinterpret_cast<const GLubyte*>("?"));
  if (!app.ui.gl43)
    app.notify("OpenGL 4.3 is not available (" + app.ui.gl_version +
               "): GPU attention is off; everything else works on the CPU");

  app.ui.content_scale_forced = opt.scale > 0;
  if (opt.scale > 0) {
    app.ui.content_scale = opt.scale;
  } else {
    float xs = 1, ys = 1;
    glfwGetWindowContentScale(window, &xs, &ys);
    app.ui.content_scale = std::clamp(xs, 1.0f, 4.0f);
  }
  glfwSetWindowContentScaleCallback(window, on_content_scale);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  sf::install_settings(app, opt.no_ini);
  sf::build_fonts(app, false);
  sf::apply_style(app);
  glfwSetDropCallback(window, on_drop);  // before ImGui's backend, which chains callbacks
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init(app.ui.gl43 ? "#version 430" : "#version 330");

  if (!opt.model.empty()) app.open_model(opt.model);
  if (!opt.prompt.empty()) app.session.set_prompt(opt.prompt);
  if (!opt.session.empty())  // a file that cannot be read leaves its reason in the notice bar, and nothing changes
    if (auto* sessions = app.feature<sf::SessionFeature>()) sessions->open(app, opt.session, error);

  sf::ScriptRunner script(app, opt.actions);
  sf::FrameBench bench(opt.bench);
  std::unique_ptr<sf::Monkey> monkey;
  if (opt.monkey.active()) monkey = std::make_unique<sf::Monkey>(app, opt.monkey);
  int frames = opt.frames > 0 ? opt.frames : -1;
  if (bench.active()) frames = bench.total_frames();
  if (monkey) frames = -1;  // the monkey's count (or a signal) ends the run
  int exit_code = 0;
  // --dump-state reports what the last frame drew (clipped text, what shows): record it.
  if (!opt.dump_state.empty()) sf::ui_probe::set_enabled(true);
  for (int f = 0; frames < 0 || f < frames; ++f) {
    // The script's actions each get their frame and a frame after it; the run ends two frames
    // after the last one, whatever --frames says.
    if (frames > 0 && script.busy()) frames = std::max(frames, f + 3);
    // A monkey that clicked File › Quit keeps going: only its count or a signal ends its run.
    if (monkey ? monkey->done() : glfwWindowShouldClose(window) || app.ui.want_quit) break;
    if (frames < 0 && !monkey) glfwWaitEventsTimeout(app.session.tracing() ? 0.05 : 0.25);  // progress while tracing
    else glfwPollEvents();
    script.step(f);
    if (monkey) monkey->step();
    if (bench.active()) {
      bench.begin_frame();
      if (const std::string p = bench.prompt_for(f); !p.empty()) {
        app.session.set_prompt(p);
        bench.add_trace_ms(app.session.last_trace_ms());
      }
    }
    if (app.ui.font_dirty) {
      sf::build_fonts(app, true);
      sf::apply_style(app);
    }
    sf::ui_probe::begin_frame();
    ImGui_ImplOpenGL3_NewFrame();
    // The font atlas is a texture now (the backend made it above): its copies in memory, 2 MiB of
    // alpha and 8 MiB of RGBA for a 2048×1024 atlas, are let go (build_fonts makes them again).
    ImGui::GetIO().Fonts->ClearTexData();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.draw();
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    // The tiled windows draw no background of their own: the clear colour is their background.
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    for (auto& feature : app.features) feature->after_render(app, w, h);
    script.after_render(w, h);
    const bool last = (frames > 0 && f == frames - 1) || (monkey && monkey->done());
    if (last && !opt.screenshot.empty() && !sf::save_screenshot(opt.screenshot, w, h, error)) {
      std::fprintf(stderr, "stepformer: error: %s\n", error.c_str());
      exit_code = 1;
    }
    if (last && !opt.dump_state.empty() && !app.write_state(opt.dump_state, error)) {
      std::fprintf(stderr, "stepformer: error: %s\n", error.c_str());
      exit_code = 1;
    }
    glfwSwapBuffers(window);
    if (bench.active()) {
      glFinish();
      bench.end_frame(f);
    }
    sf::trim_draw_lists();  // after the frame's last use of its draw data
    ++app.ui.frame_index;
  }
  if (bench.active()) std::fputs(bench.report().c_str(), stdout);
  if (monkey && !monkey->report()) exit_code = 4;
  if (!script.errors().empty()) {
    for (const auto& e : script.errors()) std::fprintf(stderr, "stepformer: error: %s\n", e.c_str());
    exit_code = 3;
  }
  app.release_gl();  // the GPU attention's buffers and programs, while the context is current
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  g_app = nullptr;
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
