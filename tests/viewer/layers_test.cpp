// Dense layers' model: sample types, colormap names and validate_layers(),
// each bad input an InvalidFrame naming the layer's field.
#include <handoff/frame_validate.hpp>
#include <handoff/media/overlay.hpp>

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace handoff::media {
namespace {

using ::testing::HasSubstr;

// Host samples for a w x h (x count) array of `type`, kept alive by the test.
struct HostArray {
  std::vector<std::uint64_t> storage;  // 8-byte aligned for every sample type
  LayerArray array;
  HostArray(SampleType type, std::uint32_t w, std::uint32_t h, std::uint32_t count = 1) {
    array.type = type;
    array.width = w;
    array.height = h;
    array.count = count;
    storage.resize((std::size_t(w) * h * count * sample_size(type) + 7) / 8 + 1);
    array.data = storage.data();
  }
};

ClassMap class_map_of(const LayerArray& a) {
  ClassMap m;
  m.ids = a;
  return m;
}
ScalarMap scalar_map_of(const LayerArray& a) {
  ScalarMap m;
  m.values = a;
  return m;
}
InstanceMasks masks_of(const LayerArray& a) {
  InstanceMasks m;
  m.masks = a;
  return m;
}

struct Fixture {
  HostArray ids{SampleType::I32, 8, 6};
  HostArray values{SampleType::F32, 8, 6};
  HostArray masks{SampleType::U8, 8, 6, 2};
  OverlayFrame frame;
  Fixture() {
    frame.add_box(0, 0, 4, 4, "a", 0.9f, 1);
    frame.add_box(2, 2, 6, 6, "b", 0.8f, 2);
    frame.layers.push_back(class_map_of(ids.array));
    frame.layers.push_back(scalar_map_of(values.array));
    frame.layers.push_back(masks_of(masks.array));
  }
  ClassMap& class_map() { return std::get<ClassMap>(frame.layers[0]); }
  ScalarMap& scalar_map() { return std::get<ScalarMap>(frame.layers[1]); }
  InstanceMasks& instance_masks() { return std::get<InstanceMasks>(frame.layers[2]); }
};

// The field and message of the InvalidFrame validate_layers throws.
std::pair<std::string, std::string> refusal(const OverlayFrame& f, int cuda_device = 0) {
  try {
    validate_layers(f, cuda_device);
  } catch (const InvalidFrame& e) {
    return {e.field(), e.what()};
  }
  ADD_FAILURE() << "validate_layers accepted the layers";
  return {};
}

TEST(Layers, SampleTypes) {
  EXPECT_EQ(sample_size(SampleType::U8), 1u);
  EXPECT_EQ(sample_size(SampleType::I16), 2u);
  EXPECT_EQ(sample_size(SampleType::F16), 2u);
  EXPECT_EQ(sample_size(SampleType::U32), 4u);
  EXPECT_EQ(sample_size(SampleType::I64), 8u);
  EXPECT_EQ(sample_size(SampleType::F64), 8u);
  EXPECT_EQ(sample_size(SampleType::Bool), 1u);
  EXPECT_TRUE(is_integer(SampleType::I8));
  EXPECT_FALSE(is_integer(SampleType::Bool));
  EXPECT_FALSE(is_integer(SampleType::F32));
  EXPECT_TRUE(is_floating(SampleType::F16));
  EXPECT_EQ(to_string(SampleType::U64), "u64");
}

TEST(Layers, ColormapNames) {
  for (Colormap c : kColormaps) EXPECT_EQ(parse_colormap(to_string(c)), c);
  EXPECT_EQ(parse_colormap("Viridis"), Colormap::Viridis);
  try {
    parse_colormap("jet");
    FAIL() << "jet accepted";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "colormap");
    EXPECT_THAT(e.what(), HasSubstr("'jet' is not one of gray, viridis, turbo, inferno, magma, plasma"));
  }
}

TEST(Layers, ValidLayersPass) {
  Fixture f;
  EXPECT_NO_THROW(validate_layers(f.frame, 0));
  EXPECT_EQ(boxed_objects(f.frame), 2u);
  EXPECT_EQ(layer_kind(f.frame.layers[2]), "instance masks");
  f.frame.clear();
  EXPECT_TRUE(f.frame.layers.empty());
}

TEST(Layers, EveryIntegerWidthIsAClassId) {
  for (SampleType t : {SampleType::U8, SampleType::U16, SampleType::U32, SampleType::U64, SampleType::I8,
                       SampleType::I16, SampleType::I32, SampleType::I64}) {
    HostArray ids(t, 5, 3);
    OverlayFrame f;
    f.layers.push_back(class_map_of(ids.array));
    EXPECT_NO_THROW(validate_layers(f, 0)) << to_string(t);
  }
}

TEST(Layers, FloatClassIdsAreRefused) {
  Fixture f;
  HostArray floats(SampleType::F32, 8, 6);
  f.class_map().ids = floats.array;
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[0].ids.type");
  EXPECT_THAT(what, HasSubstr("class ids are integers"));
  EXPECT_THAT(what, HasSubstr("not f32"));
}

TEST(Layers, PaletteIdsMustLieTogether) {
  Fixture f;
  f.class_map().colors[-1] = Color8{1, 2, 3, 255};
  f.class_map().transparent = {kMaxPaletteSpan - 2};
  EXPECT_NO_THROW(validate_layers(f.frame, 0));
  f.class_map().transparent = {kMaxPaletteSpan - 1};
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[0].colors");
  EXPECT_THAT(what, HasSubstr("run from -1 (colors) to 65535 (transparent): they must lie within 65536"));
  // Named by the argument that holds both ends.
  Fixture g;
  g.class_map().transparent = {0, 70000};
  std::tie(field, what) = refusal(g.frame);
  EXPECT_EQ(field, "layers[0].transparent");
  EXPECT_THAT(what, HasSubstr("run from 0 (transparent) to 70000 (transparent)"));
}

TEST(Layers, PaletteIdsAreTheirValuesForTheIdsType) {
  // uint32 ids above 2^31: one palette, at its place.
  Fixture f;
  f.class_map().ids.type = SampleType::U32;
  f.class_map().colors[3000000000] = Color8{255, 0, 0, 255};
  f.class_map().transparent = {3000065535};
  EXPECT_NO_THROW(validate_layers(f.frame, 0));
  f.class_map().transparent = {0};
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[0].colors");
  EXPECT_THAT(what, HasSubstr("run from 0 (transparent) to 3000000000 (colors)"));
  // Ids the type cannot hold are never drawn: not part of the palette.
  Fixture g;
  g.class_map().colors[std::int64_t{1} << 40] = Color8{};
  g.class_map().colors[-1] = Color8{};
  EXPECT_NO_THROW(validate_layers(g.frame, 0));
  g.class_map().ids.type = SampleType::U32;  // -1 is none of its ids, 2^40 none either
  EXPECT_NO_THROW(validate_layers(g.frame, 0));
  // uint64 ids are keyed by their bits: 2^64 - 1 is key -1, the top of the order.
  EXPECT_TRUE(class_id_fits(SampleType::U64, -1));
  EXPECT_FALSE(class_id_fits(SampleType::U32, -1));
  EXPECT_TRUE(class_id_fits(SampleType::U32, 0xFFFFFFFF));
  EXPECT_FALSE(class_id_fits(SampleType::I8, 128));
  EXPECT_GT(class_id_order(SampleType::U64, -1), class_id_order(SampleType::U64, 5));
  EXPECT_LT(class_id_order(SampleType::I64, -1), class_id_order(SampleType::I64, 5));
  EXPECT_EQ(class_id_text(SampleType::U64, -1), "18446744073709551615");
  EXPECT_EQ(class_id_text(SampleType::I64, -1), "-1");
  HostArray wide(SampleType::U64, 8, 6);
  Fixture h;
  h.class_map().ids = wide.array;
  h.class_map().colors[-1] = Color8{};  // 2^64 - 1
  h.class_map().transparent = {-70000};  // 2^64 - 70000: 69999 ids below it
  EXPECT_EQ(refusal(h.frame).first, "layers[0].colors");
  h.class_map().transparent = {-65536};
  EXPECT_NO_THROW(validate_layers(h.frame, 0));
}

TEST(Layers, ThreeDimensionalScalarMapIsRefused) {
  Fixture f;
  HostArray stack(SampleType::F32, 8, 6, 3);
  f.scalar_map().values = stack.array;
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[1].values.count");
  EXPECT_THAT(what, HasSubstr("one H x W image, not 3"));
}

TEST(Layers, BoolScalarsAreRefused) {
  Fixture f;
  HostArray b(SampleType::Bool, 8, 6);
  f.scalar_map().values = b.array;
  EXPECT_EQ(refusal(f.frame).first, "layers[1].values.type");
}

TEST(Layers, UnknownColormapValueIsRefused) {
  Fixture f;
  f.scalar_map().colormap = static_cast<Colormap>(17);
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[1].colormap");
  EXPECT_THAT(what, HasSubstr("17"));
}

TEST(Layers, OpacityOutsideZeroToOneOrNaNIsRefused) {
  for (float bad : {-0.01f, 1.5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (int layer = 0; layer < 3; ++layer) {
      Fixture f;
      std::visit([&](auto& l) { l.opacity = bad; }, f.frame.layers[std::size_t(layer)]);
      auto [field, what] = refusal(f.frame);
      EXPECT_EQ(field, "layers[" + std::to_string(layer) + "].opacity") << bad;
      EXPECT_THAT(what, HasSubstr("is not in 0..1"));
    }
  }
  Fixture edges;
  edges.class_map().opacity = 0.0f;
  edges.scalar_map().opacity = 1.0f;
  EXPECT_NO_THROW(validate_layers(edges.frame, 0));
}

TEST(Layers, RangeNeedsFiniteLoBelowHi) {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::array<double, 2> bad : {std::array{2.0, 2.0}, std::array{3.0, 1.0}, std::array{0.0, inf},
                                    std::array{std::nan(""), 1.0}}) {
    Fixture f;
    f.scalar_map().range = bad;
    auto [field, what] = refusal(f.frame);
    EXPECT_EQ(field, "layers[1].range");
    EXPECT_THAT(what, HasSubstr("needs finite lo < hi"));
  }
  Fixture ok;
  ok.scalar_map().range = std::array{-1.0, 1.0};
  EXPECT_NO_THROW(validate_layers(ok.frame, 0));
}

TEST(Layers, MasksMustMatchTheBoxes) {
  Fixture f;
  f.frame.add_box(1, 1, 2, 2);
  auto [field, what] = refusal(f.frame);
  EXPECT_EQ(field, "layers[2].masks.count");
  EXPECT_THAT(what, HasSubstr("2 masks for 3 boxes"));
  // Objects without a box (a text-only object from a file) do not count.
  Fixture g;
  g.frame.objects.push_back(OverlayObject{});
  EXPECT_NO_THROW(validate_layers(g.frame, 0));
}

// A frame without detections: no boxes, no masks (count 0, data null: nothing is read).
TEST(Layers, NoMasksForNoBoxes) {
  OverlayFrame f;
  InstanceMasks none;
  none.masks.type = SampleType::Bool;
  none.masks.width = 8;
  none.masks.height = 6;
  none.masks.count = 0;
  f.layers.push_back(none);
  EXPECT_NO_THROW(validate_layers(f, 0));
  f.add_box(0, 0, 4, 4);
  EXPECT_EQ(refusal(f).first, "layers[0].masks.count");
  OverlayFrame one_null;  // one mask must have its samples
  none.masks.count = 1;
  one_null.add_box(0, 0, 4, 4);
  one_null.layers.push_back(none);
  EXPECT_EQ(refusal(one_null).first, "layers[0].masks.data");
}

TEST(Layers, MaskTypes) {
  for (SampleType t : {SampleType::Bool, SampleType::U8, SampleType::F16, SampleType::F32, SampleType::F64}) {
    Fixture f;
    HostArray m(t, 8, 6, 2);
    f.instance_masks().masks = m.array;
    EXPECT_NO_THROW(validate_layers(f.frame, 0)) << to_string(t);
  }
  Fixture f;
  HostArray m(SampleType::I32, 8, 6, 2);
  f.instance_masks().masks = m.array;
  EXPECT_EQ(refusal(f.frame).first, "layers[2].masks.type");
  Fixture g;
  g.instance_masks().threshold = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(refusal(g.frame).first, "layers[2].threshold");
}

TEST(Layers, CudaLayerOnAnotherDeviceIsRefused) {
  Fixture f;
  LayerArray& a = f.scalar_map().values;
  a.memory = MemoryKind::Cuda;
  a.device = 1;
  a.cuda_context = reinterpret_cast<void*>(0x1000);
  auto [field, what] = refusal(f.frame, 0);
  EXPECT_EQ(field, "layers[1].values.device");
  EXPECT_THAT(what, HasSubstr("on CUDA device 1, the viewer's is 0"));
  EXPECT_NO_THROW(validate_layers(f.frame, 1));
  EXPECT_EQ(refusal(f.frame, -1).first, "layers[1].values.device");
  a.cuda_context = nullptr;
  EXPECT_EQ(refusal(f.frame, 1).first, "layers[1].values.cuda_context");
  a.memory = MemoryKind::GlBuffer;
  EXPECT_EQ(refusal(f.frame, 1).first, "layers[1].values.memory");
}

TEST(Layers, SizesZeroOrAboveTheMaximumAreRefused) {
  for (std::uint32_t bad : {0u, kMaxFrameDimension + 1}) {
    Fixture f;
    f.class_map().ids.width = bad;
    auto [field, what] = refusal(f.frame);
    EXPECT_EQ(field, "layers[0].ids.width");
    EXPECT_THAT(what, HasSubstr(dimension_problem("width", bad)));
    Fixture g;
    g.instance_masks().masks.height = bad;
    EXPECT_EQ(refusal(g.frame).first, "layers[2].masks.height");
  }
}

TEST(Layers, PitchPointerAndStride) {
  Fixture f;
  f.class_map().ids.pitch = 8 * 4 - 4;  // below the row
  EXPECT_EQ(refusal(f.frame).first, "layers[0].ids.pitch");
  f.class_map().ids.pitch = 8 * 4 + 2;  // not whole samples
  EXPECT_EQ(refusal(f.frame).first, "layers[0].ids.pitch");
  f.class_map().ids.pitch = 64;
  EXPECT_NO_THROW(validate_layers(f.frame, 0));
  f.class_map().ids.data = static_cast<const char*>(f.class_map().ids.data) + 2;
  EXPECT_EQ(refusal(f.frame).first, "layers[0].ids.data");
  f.class_map().ids.data = nullptr;
  EXPECT_EQ(refusal(f.frame).first, "layers[0].ids.data");

  Fixture g;
  g.instance_masks().masks.image_stride = 8 * 6 - 1;
  EXPECT_EQ(refusal(g.frame).first, "layers[2].masks.image_stride");
  g.instance_masks().masks.image_stride = 64;
  EXPECT_NO_THROW(validate_layers(g.frame, 0));
  EXPECT_EQ(g.instance_masks().masks.span(), 64u + 48u);

  Fixture h;  // a pitch whose rows overflow the address space
  h.class_map().ids.pitch = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_EQ(refusal(h.frame).first, "layers[0].ids.pitch");
}

TEST(Layers, PackedSixtyFourBitIdsKeepTheirEntries) {
  // The carriers (live attach, recordings) send 64-bit ids as their low 32 bits: the colours, names and
  // transparent ids go with them, as the ids they were given for.
  HostArray wide(SampleType::U64, 8, 6);
  std::uint64_t* ids = wide.storage.data();
  ids[0] = ~std::uint64_t{0};
  ids[1] = (std::uint64_t{1} << 40) + 7;
  ClassMap m;
  m.ids = wide.array;
  m.colors[(std::int64_t{1} << 40) + 7] = Color8{1, 2, 3, 255};
  m.names[-1] = "max";
  m.transparent = {-1};
  Layer l = m;
  pack_layer(l);
  const auto& p = std::get<ClassMap>(l);
  ASSERT_EQ(p.ids.type, SampleType::U32);
  EXPECT_EQ(static_cast<const std::uint32_t*>(p.ids.data)[0], 0xFFFFFFFFu);
  EXPECT_EQ(p.colors.count(7), 1u);
  EXPECT_EQ(p.names.at(0xFFFFFFFF), "max");
  EXPECT_EQ(p.transparent, (std::vector<std::int64_t>{0xFFFFFFFF}));
}

TEST(Layers, TargetRectangle) {
  Fixture f;
  f.scalar_map().target = RectF{0, 80, 640, 480};
  EXPECT_NO_THROW(validate_layers(f.frame, 0));
  for (RectF bad : {RectF{0, 0, 0, 10}, RectF{0, 0, 10, -1}, RectF{std::nanf(""), 0, 10, 10},
                    RectF{0, 0, std::numeric_limits<float>::infinity(), 10}}) {
    f.scalar_map().target = bad;
    EXPECT_EQ(refusal(f.frame).first, "layers[1].target");
  }
}


double distance(Color8 a, Color8 b) {
  const double dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
  return std::sqrt(dr * dr + dg * dg + db * db);
}

TEST(LayerColors, DefaultPaletteSeparatesNeighbours) {
  // Ids next to each other (and two apart: a class map's edges often meet a
  // neighbour's neighbour) differ by at least 80 of RGB's 441.
  double closest = 1e9;
  for (std::int64_t id = 0; id < 2000; ++id) {
    closest = std::min(closest, distance(default_class_color(id), default_class_color(id + 1)));
    closest = std::min(closest, distance(default_class_color(id), default_class_color(id + 2)));
  }
  EXPECT_GE(closest, 80.0);
  // Fixed, and every id has a colour of its own nearby, ids above 255 and negative ones too.
  EXPECT_EQ(default_class_color(7), default_class_color(7));
  for (std::int64_t id : {std::int64_t{255}, std::int64_t{256}, std::int64_t{70000}, std::int64_t{1} << 40,
                          std::int64_t{-1}}) {
    EXPECT_GE(distance(default_class_color(id), default_class_color(id + 1)), 80.0) << id;
    EXPECT_EQ(default_class_color(id).a, 255);
  }
  // Not a short cycle: 256 ids apart are different colours.
  EXPECT_NE(default_class_color(3), default_class_color(3 + 256));
}

TEST(LayerColors, GrayIsTheIdentityAndTablesEndAtTheirEnds) {
  const auto& gray = colormap_table(Colormap::Gray);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(gray[std::size_t(i)], (Color8{std::uint8_t(i), std::uint8_t(i), std::uint8_t(i), 255}));
  // viridis runs from dark purple to yellow (matplotlib's ends: (68, 1, 84), (253, 231, 37)).
  const auto& viridis = colormap_table(Colormap::Viridis);
  EXPECT_LE(distance(viridis[0], Color8{68, 1, 84, 255}), 4.0);
  EXPECT_LE(distance(viridis[255], Color8{253, 231, 37, 255}), 4.0);
  EXPECT_THROW(colormap_table(static_cast<Colormap>(9)), UsageError);
}

TEST(ScalarRangeTest, RobustToOutliersAndIgnoresNonFinite) {
  std::vector<float> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) / float(v.size() - 1) * 10.0f;  // 0..10
  v[5] = 1e9f;  // a few outliers and holes
  v[6] = -1e9f;
  v[7] = std::numeric_limits<float>::quiet_NaN();
  v[8] = std::numeric_limits<float>::infinity();
  ScalarRange r;
  const auto [lo, hi] = r.update(v.data(), v.size());
  EXPECT_NEAR(lo, 0.1, 0.05);
  EXPECT_NEAR(hi, 9.9, 0.05);
}

TEST(ScalarRangeTest, StableAcrossFramesAndResetOnAJump) {
  std::vector<float> a(1000), b(1000), far(1000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i) / 999.0f;           // 0..1
    b[i] = 0.2f + float(i) / 999.0f;    // 0.2..1.2: a small move
    far[i] = 100.0f + float(i) / 999.0f;  // a jump
  }
  ScalarRange r;
  const auto first = r.update(a.data(), a.size());
  const auto moved = r.update(b.data(), b.size());
  // Moves part of the way, not all of it, towards the new range.
  EXPECT_GT(moved[0], first[0]);
  EXPECT_LT(moved[0], first[0] + 0.2 * 0.5);
  for (int i = 0; i < 60; ++i) r.update(b.data(), b.size());
  EXPECT_NEAR(r.range()[0], 0.21, 0.01);  // settles on the new range
  const auto jumped = r.update(far.data(), far.size());
  EXPECT_NEAR(jumped[0], 100.01, 0.01);
  // No finite value: the range stays.
  std::vector<float> holes(10, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(r.update(holes.data(), holes.size()), jumped);
  // A constant map sits in the middle of its range.
  ScalarRange c;
  std::vector<float> flat(50, 3.0f);
  const auto cr = c.update(flat.data(), flat.size());
  EXPECT_DOUBLE_EQ(cr[0], 2.5);
  EXPECT_DOUBLE_EQ(cr[1], 3.5);
}

// A constant map of any value gets a range float tells apart from the value,
// with the value in its middle, both ends exact in float (v +- 0.5 is lost
// in float from 2^24, in double from 2^53): it is drawn mid-colormap.
TEST(ScalarRangeTest, ConstantMapsOfAnyValueSitInTheMiddle) {
  constexpr float kMax = std::numeric_limits<float>::max();
  for (float v : {1e7f, -1e7f, 16777217.0f, 1e16f, 1e17f, -1e17f, 1e20f, 3e38f, kMax, -kMax, 1e-45f, 0.0f}) {
    ScalarRange r;
    std::vector<float> flat(64, v);
    const auto [lo, hi] = r.update(flat.data(), flat.size());
    EXPECT_LT(lo, double(v)) << v;
    EXPECT_GT(hi, double(v)) << v;
    EXPECT_DOUBLE_EQ(double(v) - lo, hi - double(v)) << v;
    if (std::abs(lo) <= double(kMax) && std::abs(hi) <= double(kMax)) {  // ends exact in float (where they fit)
      EXPECT_EQ(double(float(lo)), lo) << v;
      EXPECT_EQ(double(float(hi)), hi) << v;
      EXPECT_LT(float(lo), v) << v;
      EXPECT_GT(float(hi), v) << v;
    }
    if (std::abs(v) < 1e6f) {  // the documented half-width where float holds v +- 0.5
      EXPECT_DOUBLE_EQ(hi - lo, 1.0) << v;
    }
  }
}

}  // namespace
}  // namespace handoff::media
