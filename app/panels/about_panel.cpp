#include "app/panels/about_panel.hpp"

#include <algorithm>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <Eigen/Core>
#include <string>

#include "app/panels/panel.hpp"
#include "core/parallel/parallel.hpp"

namespace sf {

namespace {

#if defined(__clang__)
constexpr const char* kCompiler = __VERSION__;  // "Clang 14.0.6 …"
#else
constexpr const char* kCompiler = "GCC " __VERSION__;
#endif

struct Row {
  const char* a;
  const char* b;
  const char* c;
};

// Keys handled in App::handle_shortcuts (global, except while a text field has the keyboard),
// then the ones handled by a window or a widget.
const Row kShortcuts[] = {
    {"F11  or  →", "Step into", "the next event, entering calls and sub-steps"},
    {"F10", "Step over", "the next line at this depth, running the calls inside it"},
    {"Shift+F11", "Step out", "finish this algorithm and return to the calling line"},
    {"Shift+F9  or  ←", "Step back", "the previous event"},
    {"Shift+F10", "Step back over", "the previous step at this depth or above"},
    {"F5", "Continue", "run to the next breakpoint (click a line number to set one)"},
    {"Home  or  Ctrl+R", "Restart", "back to the first line"},
    {"End", "Last step", "jump to the end of the trace"},
    {"Ctrl+G", "Generate one token", "trace Algorithm 14 for the next token"},
    {"Ctrl+O", "Open a checkpoint", "the file browser (or drop a .safetensors file on the window)"},
    {"Ctrl+=  /  Ctrl+-", "Larger / smaller text", "for a projector"},
    {"Ctrl+0", "Default text size", ""},
    {"Ctrl+S  /  Ctrl+Shift+O", "Save / open a session", "the model, the prompt, the run, the cursor, the panels"},
    {"PageDown  /  PageUp", "Next / previous lesson stop", "while a lesson plays (Lesson menu)"},
    {"F6  (Esc leaves)", "Presentation mode", "projector fonts, high contrast, only the stop's panels, its focal value large"},
    {"F7", "Hide / show the lesson's note", "the caption box folds to its heading; the panels take the space"},
    {"F1", "About", "this window"},
    {"Ctrl+Q", "Quit", ""},
    {"Esc", "Close", "the file browser or this window"},
    {"Ctrl+click", "Type a value", "on any slider (τ, the timeline)"},
};

const Row kLicences[] = {
    {"Dear ImGui", "MIT", "the user interface"},
    {"GLFW", "zlib/libpng", "the window, input and the OpenGL context"},
    {"Eigen", "MPL 2.0", "all the numbers: the algorithms run on Eigen matrices"},
    {"glad2 (generated loader)", "MIT (generator), Apache-2.0 (Khronos XML)",
     "the OpenGL loader, generated at build time by glad (MIT) from the Khronos XML registry (Apache-2.0), which "
     "also supplies khrplatform.h"},
    {"OpenBLAS", "BSD-3-Clause", "the matrix products: Eigen hands its GEMMs to OpenBLAS (held to one thread)"},
    {"nlohmann/json", "MIT", "the safetensors header and model configurations"},
    {"PCRE2", "BSD-3-Clause", "the tokenizers' Unicode character classes"},
    {"zlib", "zlib", "reading the vision transformer's digits (digits.csv.gz)"},
    {"stb", "MIT or public domain", "font rasterising (through Dear ImGui) and PNG screenshots"},
    {"DejaVu fonts", "Bitstream Vera / DejaVu licence (free)", "the text, Greek and math glyphs"},
    {"GoogleTest, Google Benchmark", "BSD-3-Clause, Apache-2.0", "tests and benchmarks only, not part of the app"},
};

void table3(const char* id, const char* h1, const char* h2, const char* h3, const Row* rows, size_t n, App& app,
            bool mono_first) {
  const ImGuiTableFlags tf = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter |
                             ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable(id, 3, tf)) return;
  ImGui::TableSetupColumn(h1, ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn(h2, ImGuiTableColumnFlags_WidthStretch, 1.1f);
  ImGui::TableSetupColumn(h3, ImGuiTableColumnFlags_WidthStretch, 2.2f);
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (mono_first) ImGui::PushFont(app.fonts.mono);
    ImGui::TextWrapped("%s", rows[i].a);
    if (mono_first) ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", rows[i].b);
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", rows[i].c);
    ImGui::PopStyleColor();
  }
  ImGui::EndTable();
}

}  // namespace

void AboutPanel::draw(App& app) {
  const float fs = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  // 44 × 40 lines, or 90% of a smaller screen (it opens whole, centred).
  ImGui::SetNextWindowSize(ImVec2(std::min(fs * 44.0f, vp->WorkSize.x * 0.9f), std::min(fs * 40.0f, vp->WorkSize.y * 0.9f)),
                           ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the panels, for a projector
  bool open = true;
  if (ImGui::Begin("About Stepformer###about", &open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "Stepformer");
    ImGui::SameLine();
    ImGui::TextDisabled("a debugger for the transformer");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(
        "Stepformer steps through the pseudocode of \"Formal Algorithms for Transformers\" line by line while a real "
        "transformer computes, so that every vector and matrix a line assigns can be looked at. It traces the "
        "forward pass (Algorithm 10) and generation (Algorithm 14); the line numbers are the paper's, so the line "
        "highlighted here is the line in the PDF.");
    ImGui::Spacing();
    ImGui::TextUnformatted("The pseudocode, its notation and line numbers are adapted from [PH22]:");
    ImGui::Indent();
    ImGui::TextUnformatted("[PH22] Mary Phuong and Marcus Hutter. Formal Algorithms for Transformers. "
                           "arXiv:2207.09238, 2022.");
    ImGui::Unindent();
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    if (ImGui::BeginTabBar("about")) {
      if (ImGui::BeginTabItem("Keyboard")) {
        ImGui::TextDisabled("The keys below act everywhere except while a text field (the prompt) is being edited.");
        table3("keys", "Key", "Action", "What it does", kShortcuts, std::size(kShortcuts), app, true);
        ImGui::EndTabItem();
      }
      if (ImGui::BeginTabItem("Versions")) {
        const std::string eigen = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                                  "." + std::to_string(EIGEN_MINOR_VERSION);
        const std::string blas = matrix_product_library();
        const std::string gl = app.ui.gl_version + (app.ui.gl43 ? "  (4.3 core: compute shaders available)"
                                                                : "  (no 4.3: the CPU computes everything)");
        const Row versions[] = {
            {"Dear ImGui", ImGui::GetVersion(), ""},
            {"GLFW", glfwGetVersionString(), ""},
            {"OpenGL", gl.c_str(), ""},
            {"Eigen", eigen.c_str(), ""},
            {"Matrix products", blas.c_str(), ""},
            {"Compiler", kCompiler, ""},
        };
        const ImGuiTableFlags tf = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter;
        if (ImGui::BeginTable("versions", 2, tf)) {
          ImGui::TableSetupColumn("Component", ImGuiTableColumnFlags_WidthFixed, fs * 8.0f);
          ImGui::TableSetupColumn("Version", ImGuiTableColumnFlags_WidthStretch);
          ImGui::TableHeadersRow();
          for (const Row& r : versions) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.a);
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", r.b);
          }
          ImGui::EndTable();
        }
        ImGui::EndTabItem();
      }
      if (ImGui::BeginTabItem("Licences")) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Stepformer uses these, as packaged by Debian; each package's full licence text is in "
                            "/usr/share/doc/<package>/copyright.");
        ImGui::PopTextWrapPos();
        table3("licences", "Component", "Licence", "Used for", kLicences, std::size(kLicences), app, false);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
      open = false;
  }
  ImGui::End();
  if (!open) app.ui.show.about = false;
}

}  // namespace sf
