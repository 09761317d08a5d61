//! Runtime tests on Mesa's lavapipe (`llvmpipe`): devices, buffers, pipelines, dispatch.
//!
//! Every test opens lavapipe by name, so they run on lavapipe even where a GPU is present.
//! No test here changes the process environment (tests of env variables live in their own
//! test binaries).

mod common;

use common::*;
use pisa_runtime::{
    Context, ContextOptions, DeviceSelector, DeviceType, Error, FeatureSet, PipelineDesc,
};

fn lavapipe() -> Context {
    let opts = ContextOptions {
        validation: Some(false),
        timeout_seconds: Some(60.0),
        ..ContextOptions::default()
    };
    Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts)
        .expect("lavapipe (mesa-vulkan-drivers) must be installed for these tests")
}

#[test]
fn fill_kernel_writes_every_invocation_for_several_local_sizes() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    for local in [1u32, 7, 64] {
        for groups in [1u32, 3, 17] {
            let total = (local * groups) as usize;
            let n = total as u32 - (local > 1) as u32; // the last invocation, if any, is idle
            let buf = ctx.create_buffer(total as u64 * 4 + 4).unwrap();
            buf.write(0, &vec![0xAB; total * 4 + 4]).unwrap();
            let p = ctx
                .create_pipeline(&desc(&spirv, local, 16, "fill"))
                .unwrap();
            assert_eq!(p.local_size(), [local, 1, 1]);
            ctx.dispatch(&p, &addr_n_push(buf.device_address(), n), [groups, 1, 1])
                .unwrap();
            let got = read_u32s(&buf, total + 1);
            for (i, v) in got.iter().enumerate() {
                let want = if i < n as usize {
                    i as u32 * 3 + 7
                } else {
                    0xABAB_ABAB
                };
                assert_eq!(*v, want, "local {local} groups {groups} element {i}");
            }
        }
    }
}

#[test]
fn push_constants_of_128_bytes_arrive_intact() {
    let ctx = lavapipe();
    assert!(ctx.info().max_push_constants_size >= 128);
    let spirv = copy_push_kernel();
    let p = ctx
        .create_pipeline(&desc(&spirv, 32, 128, "copy_push"))
        .unwrap();
    let buf = ctx.create_buffer(128).unwrap();
    let mut push = Vec::new();
    push.extend(buf.device_address().to_le_bytes());
    for i in 2..32u32 {
        push.extend((i.wrapping_mul(0x9E37_79B9) ^ 0xDEAD_0000).to_le_bytes());
    }
    assert_eq!(push.len(), 128);
    ctx.dispatch(&p, &push, [1, 1, 1]).unwrap();
    let mut got = vec![0u8; 128];
    buf.read(0, &mut got).unwrap();
    assert_eq!(got, push);

    // Too many push-constant bytes is an error, not a crash.
    let err = ctx.dispatch(&p, &[0u8; 132], [1, 1, 1]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn buffer_round_trip_and_bounds() {
    let ctx = lavapipe();
    let buf = ctx.create_buffer(100).unwrap();
    assert_eq!(buf.size(), 100);
    assert_ne!(buf.device_address(), 0);
    assert_eq!(buf.device_address() % 16, 0);
    let data: Vec<u8> = (0..100u8).collect();
    buf.write(0, &data).unwrap();
    buf.write(90, &[7; 10]).unwrap();
    let mut out = vec![0u8; 100];
    buf.read(0, &mut out).unwrap();
    assert_eq!(&out[..90], &data[..90]);
    assert_eq!(&out[90..], &[7; 10]);
    let mut mid = [0u8; 3];
    buf.read(5, &mut mid).unwrap();
    assert_eq!(mid, [5, 6, 7]);

    for (offset, len) in [
        (0u64, 101usize),
        (100, 1),
        (99, 2),
        (u64::MAX, 1),
        (1000, 0),
    ] {
        let err = buf.write(offset, &vec![0; len]).unwrap_err();
        assert!(
            matches!(err, Error::OutOfBounds { size: 100, .. }),
            "write {offset}+{len}: {err}"
        );
        let err = buf.read(offset, &mut vec![0; len]).unwrap_err();
        assert!(
            matches!(err, Error::OutOfBounds { .. }),
            "read {offset}+{len}"
        );
    }
    buf.write(100, &[]).unwrap(); // empty access at the end is fine

    let empty = ctx.create_buffer(0).unwrap();
    assert_eq!(empty.size(), 0);
    assert_ne!(empty.device_address(), 0);
    assert!(empty.read(0, &mut [0u8; 1]).is_err());

    // Distinct buffers do not overlap.
    let a = ctx.create_buffer(64).unwrap();
    let b = ctx.create_buffer(64).unwrap();
    let (a0, b0) = (a.device_address(), b.device_address());
    assert!(a0 + 64 <= b0 || b0 + 64 <= a0);
}

/// A buffer whose allocation (its guard bytes included) is larger than the device's largest
/// (its largest heap, or `maxMemoryAllocationSize`) is an allocation error that names both
/// sizes, before Vulkan is asked (on an H200 such a request reached `vkAllocateMemory`, which
/// the validation layer flags); the context stays usable.
#[test]
fn a_buffer_beyond_the_largest_allocation_is_refused_before_vulkan_is_asked() {
    let ctx = lavapipe();
    let most = ctx.info().max_allocation_size;
    assert!(
        most > 0 && most < u64::MAX,
        "lavapipe lists its heap: {most}"
    );
    // Beyond it, and below it by less than the guard bytes that follow every buffer.
    for size in [most + 1, most - pisa_runtime::GUARD_BYTES / 2] {
        let err = ctx.create_buffer(size).map(|_| ()).unwrap_err();
        match &err {
            Error::Allocation(m) => {
                assert!(m.contains(&format!("{size} bytes")), "{m}");
                assert!(m.contains(&format!("({most} bytes")), "{m}");
            }
            other => panic!("{size}: {other}"),
        }
    }
    assert_eq!(ctx.create_buffer(64).unwrap().size(), 64);
}

#[test]
fn scratch_buffers_are_device_local_unlisted_and_written_by_kernels() {
    use pisa_runtime::ash::vk::MemoryPropertyFlags as Mem;
    let ctx = lavapipe();
    let host = ctx.create_buffer(64).unwrap();
    assert!(host
        .memory_properties()
        .contains(Mem::HOST_VISIBLE | Mem::HOST_COHERENT));
    let scratch = ctx.create_scratch_buffer(64 * 4).unwrap();
    // gpu-allocator's GpuOnly: a DEVICE_LOCAL memory type (every Vulkan device has one).
    assert!(scratch.memory_properties().contains(Mem::DEVICE_LOCAL));
    assert_ne!(scratch.device_address(), 0);
    assert_eq!(scratch.device_address() % 16, 0);
    let listed: Vec<u64> = ctx.live_buffers().iter().map(|b| b.address).collect();
    assert!(listed.contains(&host.device_address()));
    assert!(!listed.contains(&scratch.device_address()));
    let p = ctx
        .create_pipeline(&desc(&fill_kernel(), 64, 16, "fill"))
        .unwrap();
    ctx.dispatch(&p, &addr_n_push(scratch.device_address(), 64), [1, 1, 1])
        .unwrap();
    // lavapipe's device-local memory is host-visible too: the host reads what the kernel
    // wrote. Elsewhere such memory has no mapping and host accesses are refused.
    let visible = scratch.memory_properties().contains(Mem::HOST_VISIBLE);
    assert_eq!(scratch.is_host_visible(), visible);
    if visible {
        let want: Vec<u32> = (0..64).map(|i| i * 3 + 7).collect();
        assert_eq!(read_u32s(&scratch, 64), want);
    } else {
        let err = scratch.read(0, &mut [0u8; 4]).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(scratch.write(0, &[0u8; 4]).is_err());
    }
}

#[test]
fn buffers_and_pipelines_outlive_their_context() {
    let ctx = lavapipe();
    let buf = ctx.create_buffer(16).unwrap();
    let spirv = empty_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 1, 0, "empty")).unwrap();
    drop(ctx);
    // the buffer still works without its context, and the pipeline drops cleanly after it
    buf.write(0, &[1; 16]).unwrap();
    let mut back = [0u8; 16];
    buf.read(0, &mut back).unwrap();
    assert_eq!(back, [1; 16]);
    drop(p);
    drop(buf);
}

#[test]
fn devices_lists_lavapipe_as_a_cpu_device() {
    let devices = Context::devices().unwrap();
    let lp = devices
        .iter()
        .find(|d| d.name.contains("llvmpipe"))
        .expect("llvmpipe listed");
    assert_eq!(lp.device_type, DeviceType::Cpu);
    assert_eq!(lp.driver_name, "llvmpipe");
    assert!(lp.api_version >= (1, 3, 0), "{:?}", lp.api_version);
    // "llvmpipe (LLVM 15.0.6, 256 bits)": 32-bit lanes of the native vector width.
    let bits: u32 = lp
        .name
        .split(", ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("vector width in the name");
    assert_eq!(lp.subgroup_size, bits / 32, "{}", lp.name);
    assert_eq!(lp.min_subgroup_size, lp.subgroup_size);
    assert_eq!(lp.max_subgroup_size, lp.subgroup_size);
    if std::env::var("LP_NATIVE_VECTOR_WIDTH").is_err() && bits == 256 {
        assert_eq!(lp.subgroup_size, 8);
    }
    let f = &lp.features;
    assert!(f.buffer_device_address && f.int64 && f.int8 && f.float64);
    assert!(f.subgroup_ops.basic && f.subgroup_ops.ballot && f.subgroup_ops.clustered);
    assert!(lp.max_push_constants_size >= 128);
    assert_eq!(lp.index, devices.iter().position(|d| d == lp).unwrap());
}

#[test]
fn selection_by_index_name_and_unknown_name() {
    let devices = Context::devices().unwrap();
    let lp = devices
        .iter()
        .find(|d| d.name.contains("llvmpipe"))
        .unwrap();
    let opts = ContextOptions::default();
    let by_index = Context::with_options(DeviceSelector::Index(lp.index), &opts).unwrap();
    assert_eq!(by_index.info().name, lp.name);
    let by_name =
        Context::with_options(DeviceSelector::NameContains("LLVMPIPE".into()), &opts).unwrap();
    assert_eq!(by_name.info().index, lp.index);
    // Every supported feature is enabled; maximal reconvergence only if the validation layer
    // (when on) is recent enough to know it.
    let mut want = lp.features;
    want.maximal_reconvergence &= by_name.enabled_features().maximal_reconvergence;
    assert_eq!(by_name.enabled_features(), &want);
    let no_layer = ContextOptions {
        validation: Some(false),
        ..ContextOptions::default()
    };
    let all = Context::with_options(DeviceSelector::Index(lp.index), &no_layer).unwrap();
    assert_eq!(all.enabled_features(), &lp.features);

    match Context::with_options(
        DeviceSelector::NameContains("no-such-gpu-xyz".into()),
        &opts,
    ) {
        Err(Error::DeviceNotFound {
            selector,
            available,
        }) => {
            assert!(selector.contains("no-such-gpu-xyz"));
            assert!(
                available.iter().any(|a| a.contains("llvmpipe")),
                "{available:?}"
            );
        }
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("found a device that does not exist"),
    }
    let bad_index = Context::with_options(DeviceSelector::Index(devices.len() + 5), &opts);
    assert!(matches!(bad_index, Err(Error::DeviceNotFound { .. })));
}

#[test]
fn missing_features_are_named() {
    let ctx = lavapipe();
    let enabled = *ctx.enabled_features();
    // lavapipe (Mesa 25) has neither workgroup explicit layout nor 64-bit float atomic add.
    assert!(!enabled.workgroup_memory_explicit_layout);
    assert!(!enabled.float_atomics.buffer_f64_add);
    let spirv = empty_kernel();
    let mut d = desc(&spirv, 1, 0, "needs_too_much");
    d.required_features = FeatureSet {
        int64: true,
        workgroup_memory_explicit_layout: true,
        float_atomics: pisa_runtime::FloatAtomics {
            buffer_f64_add: true,
            ..Default::default()
        },
        ..FeatureSet::default()
    };
    match ctx.create_pipeline(&d) {
        Err(Error::MissingFeatures { what, features }) => {
            assert_eq!(what, "needs_too_much");
            assert_eq!(
                features,
                vec![
                    "shaderBufferFloat64AtomicAdd",
                    "workgroupMemoryExplicitLayout"
                ]
            );
            let text = Error::MissingFeatures { what, features }.to_string();
            assert!(text.contains("workgroupMemoryExplicitLayout"), "{text}");
        }
        other => panic!("expected MissingFeatures, got {other:?}"),
    }
    // A sub-group size lavapipe cannot give.
    let mut d = desc(&spirv, 32, 0, "wide");
    d.required_subgroup_size = Some(ctx.info().max_subgroup_size * 4);
    match ctx.create_pipeline(&d) {
        Err(Error::MissingFeatures { features, .. }) => {
            assert_eq!(
                features,
                vec![format!(
                    "requiredSubgroupSize {}",
                    ctx.info().max_subgroup_size * 4
                )]
            );
        }
        other => panic!("expected MissingFeatures, got {other:?}"),
    }
}

#[test]
fn required_subgroup_size_and_full_subgroups_work() {
    let ctx = lavapipe();
    let sg = ctx.info().subgroup_size;
    assert!(ctx.enabled_features().subgroup_size_control);
    assert!(ctx.enabled_features().compute_full_subgroups);
    let spirv = fill_kernel();
    let mut d = desc(&spirv, sg * 2, 16, "fill_sg");
    d.required_subgroup_size = Some(sg);
    d.require_full_subgroups = true;
    let p = ctx.create_pipeline(&d).unwrap();
    let buf = ctx.create_buffer(sg as u64 * 8).unwrap();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), sg * 2), [1, 1, 1])
        .unwrap();
    let got = read_u32s(&buf, sg as usize * 2);
    assert!(got.iter().enumerate().all(|(i, v)| *v == i as u32 * 3 + 7));
}

#[test]
fn pipelines_are_cached_by_module_and_specialization() {
    let ctx = lavapipe();
    let fill = fill_kernel();
    let empty = empty_kernel();
    let a = ctx.create_pipeline(&desc(&fill, 8, 16, "a")).unwrap();
    let b = ctx.create_pipeline(&desc(&fill, 8, 16, "b")).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let c = ctx.create_pipeline(&desc(&fill, 16, 16, "c")).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    let e = ctx.create_pipeline(&desc(&empty, 8, 16, "e")).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a, &e));
    // Further specialization constants (which this module does not declare: ignored by
    // the driver) are part of the key too.
    let spec = PipelineDesc {
        specialization: &[8, 1, 1],
        ..desc(&fill, 8, 16, "spec")
    };
    let s = ctx.create_pipeline(&spec).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a, &s));
    assert!(std::sync::Arc::ptr_eq(
        &s,
        &ctx.create_pipeline(&spec).unwrap()
    ));
    assert_eq!(ctx.cached_pipelines(), 4);
    ctx.clear_pipeline_cache();
    assert_eq!(ctx.cached_pipelines(), 0);
    // Still usable after leaving the cache.
    let buf = ctx.create_buffer(64).unwrap();
    ctx.dispatch(&a, &addr_n_push(buf.device_address(), 8), [1, 1, 1])
        .unwrap();
    assert_eq!(read_u32s(&buf, 1), vec![7]);
}

#[test]
fn bad_arguments_are_errors() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    let limits = ctx.info().clone();
    let bad = |d: PipelineDesc| match ctx.create_pipeline(&d) {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    let m = bad(desc(
        &spirv,
        limits.max_workgroup_invocations + 1,
        16,
        "big",
    ));
    assert!(m.contains("big"), "{m}");
    bad(PipelineDesc {
        local_size: [64, 64, 1],
        ..desc(&spirv, 1, 16, "big2")
    });
    bad(desc(&spirv, 1, limits.max_push_constants_size + 4, "push"));
    bad(desc(&[1, 2, 3], 1, 16, "garbage"));
    bad(PipelineDesc {
        entry_point: "ma\0in",
        ..desc(&spirv, 1, 16, "nul")
    });
    let m = bad(PipelineDesc {
        entry_point: "nope",
        ..desc(&spirv, 1, 16, "wrong_entry")
    });
    assert!(m.contains("\"nope\"") && m.contains("main"), "{m}");

    let p = ctx.create_pipeline(&desc(&spirv, 1, 16, "fill")).unwrap();
    let too_many = [limits.max_workgroup_count[0] + 1, 1, 1];
    let err = ctx.dispatch(&p, &[], too_many).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // Zero groups is a valid, empty dispatch.
    ctx.dispatch(&p, &[], [0, 1, 1]).unwrap();

    // A pipeline from another context is refused.
    let other = lavapipe();
    let err = other.dispatch(&p, &[], [1, 1, 1]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn contexts_are_usable_from_many_threads() {
    let ctx = std::sync::Arc::new(lavapipe());
    let spirv = std::sync::Arc::new(fill_kernel());
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let ctx = ctx.clone();
            let spirv = spirv.clone();
            std::thread::spawn(move || {
                for round in 0..10u32 {
                    let local = 1 + (t + round) % 4;
                    let p = ctx.create_pipeline(&desc(&spirv, local, 16, "mt")).unwrap();
                    let buf = ctx.create_buffer(256).unwrap();
                    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 64), [64, 1, 1])
                        .unwrap();
                    let got = read_u32s(&buf, 64);
                    assert!(got.iter().enumerate().all(|(i, v)| *v == i as u32 * 3 + 7));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn test_kernels_pass_spirv_val() {
    let Ok(out) = std::process::Command::new("spirv-val")
        .arg("--version")
        .output()
    else {
        skipped(
            "test_kernels_pass_spirv_val",
            "spirv-val is not installed (apt install spirv-tools)",
        );
        return;
    };
    assert!(out.status.success());
    let dir = std::env::temp_dir().join(format!("pisa-runtime-spv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, words) in [
        ("fill", fill_kernel()),
        ("copy_push", copy_push_kernel()),
        ("empty", empty_kernel()),
        ("spin", spin_kernel()),
    ] {
        let path = dir.join(format!("{name}.spv"));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes).unwrap();
        let out = std::process::Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_launch_of_several_parts_runs_each_with_its_own_push_constants_and_pipeline() {
    let ctx = lavapipe();
    let fill = fill_kernel();
    let p8 = ctx.create_pipeline(&desc(&fill, 8, 16, "fill8")).unwrap();
    let p4 = ctx.create_pipeline(&desc(&fill, 4, 16, "fill4")).unwrap();
    let (a, b) = (
        ctx.create_buffer(64).unwrap(),
        ctx.create_buffer(64).unwrap(),
    );
    a.write(0, &[0xAB; 64]).unwrap();
    b.write(0, &[0xAB; 64]).unwrap();
    let (push_a, push_b) = (
        addr_n_push(a.device_address(), 12),
        addr_n_push(b.device_address(), 3),
    );
    let parts = [
        pisa_runtime::DispatchPart {
            pipeline: &p8,
            push_constants: &push_a,
            group_count: [2, 1, 1],
        },
        pisa_runtime::DispatchPart {
            pipeline: &p4,
            push_constants: &push_b,
            group_count: [1, 1, 1],
        },
    ];
    ctx.launch(&parts).unwrap();
    let want = |n: usize| -> Vec<u32> {
        (0..16)
            .map(|i| if i < n { i as u32 * 3 + 7 } else { 0xABAB_ABAB })
            .collect()
    };
    assert_eq!(read_u32s(&a, 16), want(12));
    assert_eq!(read_u32s(&b, 16), want(3));
    // No parts: nothing to do.
    ctx.launch(&[]).unwrap();
    // A part beyond the group-count limit is refused before anything is submitted.
    let too_many = [pisa_runtime::DispatchPart {
        group_count: [ctx.info().max_workgroup_count[0] + 1, 1, 1],
        ..parts[0]
    }];
    assert!(matches!(
        ctx.launch(&too_many),
        Err(Error::InvalidArgument(m)) if m.contains("maxComputeWorkGroupCount")
    ));
}

#[test]
fn timed_dispatches_report_gpu_time_within_the_wall_time() {
    let ctx = lavapipe();
    let spin = spin_kernel();
    let p = ctx.create_pipeline(&desc(&spin, 1, 16, "spin")).unwrap();
    let buf = ctx.create_buffer(16).unwrap();
    let push = addr_n_push(buf.device_address(), 4);
    ctx.dispatch(&p, &push, [1, 1, 1]).unwrap(); // compile outside the timed runs
    for _ in 0..3 {
        let wall = std::time::Instant::now();
        let gpu = ctx.dispatch_timed(&p, &push, [1, 1, 1]).unwrap();
        let wall = wall.elapsed();
        // 4 * 2^20 dependent steps take well over a microsecond on any device; the GPU
        // time of the submission cannot exceed the time the host waited for it.
        assert!(gpu > std::time::Duration::from_micros(1), "{gpu:?}");
        assert!(gpu <= wall, "GPU time {gpu:?} > wall time {wall:?}");
    }
    // The timestamps bracket the whole launch: an empty one takes (almost) no time.
    let empty = ctx.launch_timed(&[]).unwrap();
    assert!(empty < std::time::Duration::from_millis(50), "{empty:?}");
}

#[test]
fn a_context_opens_the_compute_queues_it_is_allowed() {
    // lavapipe's compute family has one queue: a context opens it, whatever the limit.
    let ctx = lavapipe();
    assert_eq!(ctx.info().compute_queues, 1);
    assert_eq!(ctx.queue_count(), 1);
    let opts = ContextOptions {
        validation: Some(false),
        queues: Some(pisa_runtime::MAX_QUEUES + 5),
        ..ContextOptions::default()
    };
    let ctx =
        Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts).unwrap();
    assert_eq!(ctx.queue_count(), 1);
    // No queue at all is an error naming the option.
    let opts = ContextOptions {
        queues: Some(0),
        ..opts
    };
    match Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("ContextOptions::queues"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a context without queues was made"),
    }
}
