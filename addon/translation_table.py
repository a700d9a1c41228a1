"""Japanese and Simplified Chinese for every text Waft shows: {English: (ja_JP, zh_HANS)}.

Registered by ``addon/translations.py``. ``tools/missing_translations.py`` lists the English
texts the add-on registers that are not here yet (the coverage test fails on any).
Technique names stay recognisable: XPBD, SHAKE, FTL/DFTL, TressFX, StrayCloth, Alan Wake,
Alice: Madness Returns, Jedi: Fallen Order.
"""

MESSAGES: dict[str, tuple[str, str]] = {
    # Labels
    "Alembic": ("Alembic", "Alembic"),
    "Armature": ("アーマチュア", "骨架"),
    "Auto": ("自動", "自动"),
    "Axis Stiffness": ("軸ごとの剛性", "各轴刚度"),
    "Backstop": ("バックストップ", "背挡"),
    "Backstop Distance": ("バックストップ距離", "背挡距离"),
    "Bake Cage Mesh": ("ケージメッシュもベイク", "烘焙笼网格"),
    "Barycentric": ("重心座標", "重心坐标"),
    "Bend Compliance": ("曲げコンプライアンス", "弯曲柔度"),
    "Bend-Twist Compliance": ("曲げ・ねじりコンプライアンス", "弯曲-扭转柔度"),
    "Bending": ("曲げ", "弯曲"),
    "Blend": ("ブレンド", "混合"),
    "Body": ("ボディ", "身体"),
    "Bone": ("ボーン", "骨骼"),
    "Bounce": ("反発", "反弹"),
    "Box": ("ボックス", "盒体"),
    "Capsule": ("カプセル", "胶囊体"),
    "Captured at": ("キャプチャしたフレーム", "捕捉帧"),
    "Carrier": ("キャリア", "承载者"),
    "Carrier Bone": ("キャリアボーン", "承载骨骼"),
    "Clump": ("束ね", "成簇"),
    "Collide With Other Ragdolls": ("他のラグドールと衝突", "与其他布娃娃碰撞"),
    "Colliders": ("コライダー", "碰撞体"),
    "Companion": ("コンパニオン", "伙伴"),
    "Constrained Bones": ("コンストレイント付きボーン", "受约束骨骼"),
    "Contact Damping": ("接触減衰", "接触阻尼"),
    "Cut Blend Frames": ("カット時のブレンドフレーム", "剪切混合帧数"),
    "Cut Threshold": ("カットのしきい値", "剪切阈值"),
    "Damping": ("減衰", "阻尼"),
    "Density": ("密度", "密度"),
    "Depth": ("深さ", "深度"),
    "Direction Variation": ("方向の揺らぎ", "方向变化"),
    "Distance Limit": ("距離制限", "距离限制"),
    "Down Jacket": ("ダウンジャケット", "羽绒服"),
    "Drag": ("空気抵抗", "空气阻力"),
    "Driven": ("駆動", "驱动"),
    "Edge Damping": ("縁の減衰", "边缘阻尼"),
    "Edge Max Distance": ("縁の最大距離", "边缘最大距离"),
    "Edge Wind": ("縁の風", "边缘风力"),
    "Edge World Motion": ("縁のワールド移動", "边缘世界运动"),
    "FTL Damping": ("FTL 減衰", "FTL 阻尼"),
    "Fabric": ("生地", "面料"),
    "Fall Threshold": ("転倒しきい値", "跌倒阈值"),
    "Free": ("フリー", "自由"),
    "Friction": ("摩擦", "摩擦"),
    "Gravity": ("重力", "重力"),
    "Ground": ("地面", "地面"),
    "Ground Height": ("地面の高さ", "地面高度"),
    "Gusts": ("突風", "阵风"),
    "Hair Friction": ("髪の摩擦", "头发摩擦"),
    "Hair: Braid / Ponytail": ("髪: 三つ編み / ポニーテール", "头发: 辫子 / 马尾"),
    "Hair: Curly": ("髪: カール", "头发: 卷发"),
    "Hair: Short Stiff": ("髪: 短く硬い", "头发: 短而硬"),
    "Hair: Straight Long": ("髪: ロングストレート", "头发: 长直发"),
    "Hair: Underwater": ("髪: 水中", "头发: 水下"),
    "Hard Vertical": ("縦方向を固定", "垂直硬约束"),
    "Horizontal Compliance": ("横方向コンプライアンス", "水平柔度"),
    "How render strands follow the guides": ("レンダーストランドがガイドに従う方法",
                                             "渲染发丝跟随引导线的方式"),
    "Interpolation": ("補間", "插值"),
    "Iterations": ("反復回数", "迭代次数"),
    "Joint Damping": ("関節の減衰", "关节阻尼"),
    "Kinematic": ("キネマティック", "运动学"),
    "Layer Thickness": ("レイヤーの厚み", "层厚度"),
    "Leather": ("革", "皮革"),
    "Limp Ragdoll": ("脱力ラグドール", "瘫软布娃娃"),
    "Linear Damping": ("直線速度の減衰", "线性阻尼"),
    "Local Shape": ("ローカル形状", "局部形状"),
    "Lock Root": ("ルートを固定", "锁定根部"),
    "Lock Speed": ("固定する速度", "锁定速度"),
    "Locomotion Blend": ("移動ブレンド", "移动混合"),
    "Mass": ("質量", "质量"),
    "Max Distance": ("最大距離", "最大距离"),
    "Max Distance Group": ("最大距離グループ", "最大距离组"),
    "Max Distance Scale": ("最大距離の倍率", "最大距离缩放"),
    "Mean wind speed": ("平均風速", "平均风速"),
    "Mode": ("モード", "模式"),
    "Motor Damping": ("モーターの減衰", "马达阻尼"),
    "Motor Strength": ("モーターの強さ", "马达强度"),
    "Nearest Guide": ("最寄りのガイド", "最近引导线"),
    "Output": ("出力", "输出"),
    "Override": ("上書き", "覆盖"),
    "Physical Animation": ("物理アニメーション", "物理动画"),
    "Pin Group": ("固定グループ", "固定组"),
    "Pin Mode": ("固定モード", "固定模式"),
    "Pinned": ("固定", "固定"),
    "Plane": ("平面", "平面"),
    "Points per Strand": ("ストランドあたりの点数", "每根发丝点数"),
    "Ponytail": ("ポニーテール", "马尾"),
    "Pre-roll": ("プリロール", "预滚动"),
    "Preset": ("プリセット", "预设"),
    "Preview": ("プレビュー", "预览"),
    "Radius": ("半径", "半径"),
    "Radius A": ("半径 A", "半径 A"),
    "Radius B": ("半径 B", "半径 B"),
    "Randomness": ("ランダムさ", "随机度"),
    "Recover": ("起き上がり", "恢复"),
    "Recovery Delay": ("起き上がりまでの待ち時間", "恢复延迟"),
    "Recovery Time": ("起き上がりの時間", "恢复时长"),
    "Render Strands": ("レンダーストランド", "渲染发丝"),
    "Reset Frames": ("リセットフレーム", "重置帧"),
    "Root Bone": ("ルートボーン", "根骨骼"),
    "Root Radius": ("根元の半径", "根部半径"),
    "Rubber": ("ゴム", "橡胶"),
    "Sample Rate": ("サンプリングレート", "采样率"),
    "Scalp": ("頭皮", "头皮"),
    "Seed": ("シード", "种子"),
    "Self Collision": ("自己衝突", "自碰撞"),
    "Settled Pose": ("落ち着いたポーズ", "静置姿态"),
    "Shape": ("形状", "形状"),
    "Shape Decay": ("形状の減衰", "形状衰减"),
    "Shape Range": ("形状の範囲", "形状范围"),
    "Shape Stiffness": ("形状の剛性", "形状刚度"),
    "Shear Compliance": ("せん断コンプライアンス", "剪切柔度"),
    "Shock Propagation": ("衝撃の伝播", "冲击传播"),
    "Show Collider Shapes": ("コライダー形状を表示", "显示碰撞体形状"),
    "Show Simulation Shapes": ("シミュレーション形状を表示", "显示模拟形状"),
    "Silk": ("シルク", "丝绸"),
    "Simulate": ("シミュレート", "模拟"),
    "Skinned": ("スキン", "蒙皮"),
    "Soft": ("柔らかい", "柔软"),
    "Space Bone": ("空間ボーン", "空间骨骼"),
    "Sphere": ("球", "球体"),
    "Stiff": ("硬い", "坚硬"),
    "Strand Variation": ("ストランドごとの揺らぎ", "发丝差异"),
    "Strands": ("ストランド", "发丝"),
    "Stretch Compliance": ("伸びコンプライアンス", "拉伸柔度"),
    "Stretch-Shear Compliance": ("伸び・せん断コンプライアンス", "拉伸-剪切柔度"),
    "Substep Rate": ("サブステップレート", "子步频率"),
    "Surface": ("サーフェス", "表面"),
    "Swing Limit": ("スイング制限", "摆动限制"),
    "Weld to Parent": ("親に溶接", "焊接到父级"),
    "Swing Center": ("スイング中心", "摆动中心"),
    "Tail": ("しっぽ", "尾巴"),
    "Tangent Response": ("接線方向の応答", "切向响应"),
    "Tether": ("テザー", "系绳"),
    "Tip Radius": ("先端の半径", "尖端半径"),
    "Turbulence": ("乱流", "湍流"),
    "Turn Off for Result": ("結果ではオフにする", "结果中关闭"),
    "Tweed": ("ツイード", "粗花呢"),
    "Twist Limit": ("ねじれ制限", "扭转限制"),
    "Use Mass": ("質量を使用", "使用质量"),
    "Veil": ("ベール", "面纱"),
    "Velocity Drive": ("速度ドライブ", "速度驱动"),
    "Vertex": ("頂点", "顶点"),
    "Vertex Group": ("頂点グループ", "顶点组"),
    "Voxel Resolution": ("ボクセル解像度", "体素分辨率"),
    "Waft Cloth": ("Waft クロス", "Waft 布料"),
    "Waft Collider": ("Waft コライダー", "Waft 碰撞体"),
    "Waft Hair Guides": ("Waft 髪ガイド", "Waft 头发引导线"),
    "Waft Preview": ("Waft プレビュー", "Waft 预览"),
    "Waft Ragdoll": ("Waft ラグドール", "Waft 布娃娃"),
    "Waft Rods": ("Waft ロッド", "Waft 杆"),
    "Waft Setup": ("Waft セットアップ", "Waft 设置"),
    "Warn": ("警告", "警告"),
    "Wind": ("風", "风"),
    "Wind Direction": ("風向き", "风向"),
    "Wind Seed": ("風のシード", "风种子"),
    "Wind Speed": ("風速", "风速"),
    "World Motion": ("ワールド移動", "世界运动"),
}

# Tooltips
MESSAGES.update({
    "A rope of hair that keeps its weave and swings as a whole": (
        "編み目を保ったまま一本のロープとして揺れる髪",
        "保持编织形状、整体摆动的一股头发"),
    "A skinned vertex jumping further than this between two frames marks an animation cut "
    "(StrayCloth)": (
        "スキン頂点が 2 フレーム間でこれより大きく跳んだら、アニメーションのカットとみなします"
        "(StrayCloth)",
        "蒙皮顶点在两帧之间跳动超过此距离即视为动画剪切(StrayCloth)"),
    "Add a Waft collider empty (parented to the active bone in Pose Mode)": (
        "Waft コライダーのエンプティを追加(ポーズモードではアクティブボーンの子にします)",
        "添加 Waft 碰撞体空物体(姿态模式下作为活动骨骼的子级)"),
    "After a fall, blend the character back to its animation (get up): wait Recovery Delay, "
    "then blend over Recovery Time, without a jump": (
        "転倒後にキャラクターをアニメーションへ戻します(起き上がり): 待ち時間の後、起き上がりの"
        "時間をかけて跳ねることなくブレンドします",
        "跌倒后让角色混合回动画(起身): 等待恢复延迟, 再在恢复时长内无跳变地混合"),
    "Air drag multiplier on edge vertices, so the wind pushes them harder (and still air slows "
    "them more)": (
        "縁の頂点の空気抵抗の倍率。風が強く当たり、静かな空気ではより減速します",
        "边缘顶点的空气阻力倍数: 风对其作用更强, 静止空气中也减速更多"),
    "Air drag toward the wind velocity, per second (1/s)": (
        "風速へ向かう空気抵抗、毎秒 (1/s)", "朝向风速的空气阻力, 每秒 (1/s)"),
    "Alan Wake's jacket: heavy wool, holds its shape, clings to the body, edges flutter": (
        "Alan Wake のジャケット: 重いウール、形を保ち、体に沿い、縁がはためく",
        "Alan Wake 的夹克: 厚重羊毛, 保持形状, 贴合身体, 边缘飘动"),
    "Also export the render strands to this Alembic file after baking (empty = no export)": (
        "ベイク後にレンダーストランドをこの Alembic ファイルにも書き出します(空 = 書き出さない)",
        "烘焙后同时将渲染发丝导出到此 Alembic 文件(留空 = 不导出)"),
    "Also write the simulated cage as an animated mesh object ('<cage> Waft') for viewing": (
        "確認用に、シミュレートしたケージをアニメーション付きメッシュ('<cage> Waft')としても"
        "書き出します",
        "同时将模拟后的笼子写为动画网格物体('<cage> Waft')以便查看"),
    "Angular velocity relative to the parent decays at this rate per second": (
        "親に対する角速度がこの割合で毎秒減衰します", "相对父级的角速度以此速率每秒衰减"),
    "Another ragdoll armature this one hangs on (a companion on a character's back): its root "
    "body follows the carrier's simulated body in the same frame, so it is solved after its "
    "carrier": (
        "このラグドールがぶら下がる別のラグドールのアーマチュア(キャラクターの背中のコンパニオン"
        "など): ルートボディは同じフレームのキャリアのシミュレート結果に従うため、キャリアの後に"
        "解かれます",
        "此布娃娃挂靠的另一个布娃娃骨架(如角色背上的伙伴): 其根刚体跟随承载者同一帧的模拟结果, "
        "因此在承载者之后求解"),
    "Armature whose bones the cage drives": (
        "ケージがボーンを駆動するアーマチュア", "笼子所驱动骨骼所在的骨架"),
    "Bake the active cloth cage, with the simulated cage mesh as extra output": (
        "アクティブなクロスケージをベイクし、シミュレートしたケージメッシュも出力します",
        "烘焙活动布料笼, 并额外输出模拟后的笼网格"),
    "Bake, and warn about every baked bone a constraint or driver overrides": (
        "ベイクし、コンストレイントやドライバーが上書きするボーンをすべて警告します",
        "烘焙, 并对被约束或驱动器覆盖的每根烘焙骨骼发出警告"),
    "Baked bones that a constraint (Copy Rotation, Damped Track, IK, Child Of…) or a driver "
    "would override play back away from the simulation: warn about them, or turn those "
    "constraints off in Waft's result (muting or clearing the result gives them back)": (
        "コンストレイント(回転コピー、減衰トラック、IK、子供の…)やドライバーに上書きされる"
        "ベイク済みボーンは、シミュレーションとは違って再生されます: 警告するか、Waft の結果で"
        "それらのコンストレイントをオフにします(結果をミュートまたは消去すると元に戻ります)",
        "被约束(复制旋转、阻尼追踪、IK、子级…)或驱动器覆盖的烘焙骨骼回放时会偏离模拟: "
        "发出警告, 或在 Waft 的结果中关闭这些约束(静音或清除结果即可恢复)"),
    "Blend the three guides around each strand (triangles of guide roots); smooth, no bundles": (
        "各ストランドを囲む 3 本のガイドをブレンドします(ガイド根元の三角形)。滑らかで束になりません",
        "混合每根发丝周围的三根引导线(引导线根部三角形): 平滑, 不成束"),
    "Bodies of one ragdoll collide with each other (not joint neighbours, not bodies that "
    "overlap at rest); on when any ragdoll baked together wants it": (
        "1 つのラグドールのボディ同士が衝突します(関節で隣り合うもの、レスト時に重なるものを除く)。"
        "一緒にベイクするラグドールのどれかが望めばオン",
        "同一布娃娃的刚体互相碰撞(关节相邻者及静止时重叠者除外); 一起烘焙的任一布娃娃需要时即开启"),
    "Body mesh the pinned vertices stick to (Surface pin mode)": (
        "固定頂点が貼り付く体のメッシュ(サーフェス固定モード)",
        "固定顶点所附着的身体网格(表面固定模式)"),
    "Bone of the armature driven by the cage": (
        "ケージが駆動するアーマチュアのボーン", "由笼子驱动的骨架骨骼"),
    "Bone whose frame is the character space (World Motion); empty = the armature object": (
        "そのフレームがキャラクター空間となるボーン(ワールド移動)。空 = アーマチュアオブジェクト",
        "其坐标系作为角色空间的骨骼(世界运动); 留空 = 骨架物体"),
    "Bone whose frame is the character space of the local-space simulation (World Motion); "
    "empty = the armature object": (
        "ローカル空間シミュレーションのキャラクター空間となるボーン(ワールド移動)。"
        "空 = アーマチュアオブジェクト",
        "局部空间模拟中作为角色空间的骨骼(世界运动); 留空 = 骨架物体"),
    "Box with half-extents Display Size along each local axis": (
        "各ローカル軸に沿って表示サイズを半分の大きさとするボックス",
        "沿各局部轴半边长为显示尺寸的盒体"),
    "Built-in chain and hair presets and the ones you saved": (
        "組み込みのチェーン・髪プリセットと保存したプリセット",
        "内置的骨链和头发预设及您保存的预设"),
    "Built-in fabric presets and the ones you saved": (
        "組み込みの生地プリセットと保存したプリセット", "内置的面料预设及您保存的预设"),
    "Built-in ragdoll presets and the ones you saved": (
        "組み込みのラグドールプリセットと保存したプリセット", "内置的布娃娃预设及您保存的预设"),
    "Buoyant hair: reversed gravity, heavy drag, only the scalp part of the shape kept": (
        "浮力のある髪: 重力を反転、強い抵抗、頭皮付近の形状だけを保持",
        "有浮力的头发: 反向重力, 强阻力, 只保留头皮附近的形状"),
    "Cage vertex the bone's head follows (-1 = not mapped, an error)": (
        "ボーンのヘッドが追従するケージ頂点(-1 = 未対応、エラー)",
        "骨骼头部跟随的笼顶点(-1 = 未映射, 属于错误)"),
    "Capsule radius at local +Z, in the empty's local units": (
        "ローカル +Z 側のカプセル半径(エンプティのローカル単位)",
        "局部 +Z 端的胶囊半径(空物体的局部单位)"),
    "Capsule radius at local −Z, in the empty's local units": (
        "ローカル −Z 側のカプセル半径(エンプティのローカル単位)",
        "局部 −Z 端的胶囊半径(空物体的局部单位)"),
    "Capsule radius; 0 = the bone's envelope radius (mean of head and tail radius)": (
        "カプセルの半径。0 = ボーンのエンベロープ半径(ヘッドとテールの半径の平均)",
        "胶囊半径; 0 = 骨骼的封套半径(头尾半径的平均值)"),
    "Carry this fraction of the root's sudden motion (per 1/60 s) down the whole strand, so "
    "fast head turns do not leave the hair behind (TressFX)": (
        "根元の急な動きのこの割合(1/60 秒あたり)をストランド全体に伝え、素早く頭を回しても髪が"
        "置いていかれないようにします(TressFX)",
        "将根部突然运动的此比例(每 1/60 秒)传递到整根发丝, 使快速转头时头发不被甩在后面(TressFX)"),
    "Cells per axis of the velocity grid around each setup's strands": (
        "各セットアップのストランドを囲む速度グリッドの軸あたりのセル数",
        "每个设置的发丝周围速度网格在每个轴上的单元数"),
    "Collide with a horizontal ground plane at Ground Height": (
        "地面の高さにある水平な地面と衝突します", "与位于地面高度的水平地面碰撞"),
    "Collision radius of each cage vertex": ("各ケージ頂点の衝突半径", "每个笼顶点的碰撞半径"),
    "Collision radius of each particle": ("各パーティクルの衝突半径", "每个粒子的碰撞半径"),
    "Collision radius of each rod particle": (
        "各ロッドパーティクルの衝突半径", "每个杆粒子的碰撞半径"),
    "Collision radius of this bone's tail": ("このボーンのテールの衝突半径", "此骨骼尾端的碰撞半径"),
    "Comma-separated scene frames where the cloth restarts from the skinned pose (hard cuts you "
    "know about)": (
        "クロスがスキンのポーズから再開するシーンフレーム(カンマ区切り。既知のハードカット)",
        "布料从蒙皮姿态重新开始的场景帧(逗号分隔; 已知的硬剪切)"),
    "Constraint passes per substep (more substeps beat more iterations)": (
        "サブステップごとのコンストレイントの反復回数(反復を増やすよりサブステップを増やす方が効果的)",
        "每个子步的约束求解次数(增加子步比增加迭代更有效)"),
    "Constraint passes per substep; 0 = the scene's (Jedi: Fallen Order needed many more than "
    "the engine default). Ragdolls baked together use the highest": (
        "サブステップごとのコンストレイントの反復回数。0 = シーンの値(Jedi: Fallen Order では"
        "エンジン既定値よりずっと多く必要でした)。一緒にベイクするラグドールは最大値を使います",
        "每个子步的约束求解次数; 0 = 场景设置(Jedi: Fallen Order 需要比引擎默认多得多的次数)。"
        "一起烘焙的布娃娃使用最大值"),
    "Coulomb friction against colliders, the ground and the other bodies it touches; low "
    "values let driven bodies slide to their targets": (
        "コライダー、地面、触れている他のボディに対するクーロン摩擦。低い値だと駆動ボディが目標へ"
        "滑っていけます",
        "与碰撞体、地面和所接触的其他刚体的库仑摩擦; 数值低时驱动刚体可以滑向目标"),
    "Coulomb friction coefficient of contacts with this collider": (
        "このコライダーとの接触のクーロン摩擦係数", "与此碰撞体接触时的库仑摩擦系数"),
    "Curls keep their shape (local shape) while they bounce": (
        "弾みながらもカールの形を保ちます(ローカル形状)", "卷发在弹动时保持形状(局部形状)"),
    "Curves object the render strands are written to (created as '<setup> Strands' when empty)": (
        "レンダーストランドを書き込むカーブオブジェクト(空なら '<setup> Strands' を作成)",
        "写入渲染发丝的曲线物体(留空时创建 '<setup> Strands')"),
    "Damping multiplier on edge vertices (fewer than 4 neighbours, Alan Wake)": (
        "縁の頂点(隣接が 4 未満、Alan Wake)の減衰の倍率", "边缘顶点(邻居少于 4 个, Alan Wake)的阻尼倍数"),
    "Damping ratio of the motor's spring (0 = springy, 1 = critically damped); independent of "
    "frame rate and substep": (
        "モーターのばねの減衰比(0 = よく弾む、1 = 臨界減衰)。フレームレートやサブステップに依存しません",
        "马达弹簧的阻尼比(0 = 弹性大, 1 = 临界阻尼); 与帧率和子步无关"),
    "Density (kg/m³) of bodies that give neither their own density nor mass; mass = density × "
    "capsule volume": (
        "独自の密度も質量も持たないボディの密度 (kg/m³)。質量 = 密度 × カプセルの体積",
        "未指定自身密度或质量的刚体的密度 (kg/m³); 质量 = 密度 × 胶囊体积"),
    "Density (kg/m³); 0 = the ragdoll's default density": (
        "密度 (kg/m³)。0 = ラグドールの既定の密度", "密度 (kg/m³); 0 = 布娃娃的默认密度"),
    "Direction the wind blows toward (normalised when baking)": (
        "風が吹いていく方向(ベイク時に正規化)", "风吹向的方向(烘焙时归一化)"),
    "Draw every Waft collider in the viewport as the exact surface chains, hair, cloth and "
    "ragdolls collide with": (
        "すべての Waft コライダーを、チェーン・髪・クロス・ラグドールが実際に衝突する正確な形で"
        "ビューポートに描画します",
        "在视口中按骨链、头发、布料和布娃娃实际碰撞的精确表面绘制每个 Waft 碰撞体"),
    "Draw in the viewport what the selected setups simulate with, at the size it acts: each "
    "chain bone's collision sphere, ragdoll bodies, joint swing limits and (after a bake) the "
    "animation target in red, cloth pinned vertices and max-distance spheres": (
        "選択したセットアップがシミュレーションに使うものを、実際に作用する大きさでビューポートに描画します: "
        "各チェーンボーンの衝突球、ラグドールのボディ、関節のスイング制限と(ベイク後は)赤いアニメーションの目標、"
        "クロスの固定頂点と最大距離の球",
        "在视口中按实际作用的大小绘制所选设置模拟所用的形状: 每根骨链骨骼的碰撞球、布娃娃的刚体、关节摆动限制和"
        "(烘焙后)红色的动画目标、布料的固定顶点和最大距离球"),
    "Each particle stays within this distance of its animated position; 0 = no limit": (
        "各パーティクルはアニメーション位置からこの距離以内にとどまります。0 = 制限なし",
        "每个粒子保持在其动画位置的此距离以内; 0 = 不限制"),
    "Each vertex stays within this distance of its skinned position, times its Max Distance "
    "Group weight; 0 = no limit. Read once per bake: key Max Distance Scale to animate it": (
        "各頂点はスキン位置から、この距離 × 最大距離グループのウェイト以内にとどまります。0 = 制限なし。"
        "ベイクごとに一度だけ読まれます。アニメーションさせるには最大距離の倍率をキーにします",
        "每个顶点保持在其蒙皮位置的此距离 × 最大距离组权重以内; 0 = 不限制。每次烘焙只读取一次: "
        "要做动画请对最大距离缩放打关键帧"),
    "Export the baked render strands of the active object to its Alembic path": (
        "アクティブオブジェクトのベイク済みレンダーストランドを、その Alembic パスに書き出します",
        "将活动物体已烘焙的渲染发丝导出到其 Alembic 路径"),
    "Extra damping (1/s) on vertices touching a collider: contact friction (Alan Wake)": (
        "コライダーに触れている頂点への追加の減衰 (1/s): 接触摩擦(Alan Wake)",
        "接触碰撞体的顶点的额外阻尼 (1/s): 接触摩擦(Alan Wake)"),
    "Fabric preset; applied with Apply Fabric": (
        "生地プリセット。生地を適用で適用します", "面料预设; 通过应用面料来应用"),
    "Fast seeded noise on the wind, relative to the wind speed": (
        "風に加える速いシード付きノイズ(風速に対する割合)", "叠加在风上的快速种子噪声(相对风速)"),
    "First bone of the chain; the chain continues through each bone's only child (a one-bone "
    "chain is Alan Wake's hood pendulum)": (
        "チェーンの最初のボーン。チェーンは各ボーンの唯一の子へと続きます(1 ボーンのチェーンは"
        "Alan Wake のフードの振り子)",
        "骨链的第一根骨骼; 骨链沿每根骨骼唯一的子级延续(单骨骼链即 Alan Wake 的兜帽摆锤)"),
    "Follow the animation exactly (kinematic) instead of being simulated": (
        "シミュレートせず、アニメーションに正確に従います(キネマティック)",
        "不进行模拟, 而是严格跟随动画(运动学)"),
    "Follow the nearest guide with a fixed offset (Changyou's strand hair); visible locks, "
    "cheapest": (
        "最寄りのガイドに一定のオフセットで従います(Changyou のストランドヘア)。房が見え、最も軽量",
        "以固定偏移跟随最近的引导线(畅游的发丝头发); 发束明显, 开销最低"),
    "Follows the animation exactly (hands on a ledge, the feet of a companion clinging to its "
    "carrier)": (
        "アニメーションに正確に従います(縁をつかむ手、キャリアにしがみつくコンパニオンの足)",
        "严格跟随动画(扒住边缘的手, 紧抱承载者的伙伴的脚)"),
    "Fraction T (per 1/30 s) of the body's linear velocity blended toward the velocity that "
    "reaches its animation target this frame (Jedi: Fallen Order's hips on the beam)": (
        "ボディの直線速度を、このフレームでアニメーション目標に届く速度へブレンドする割合 T"
        "(1/30 秒あたり。Jedi: Fallen Order の梁の上の腰)",
        "刚体线速度向本帧到达动画目标所需速度混合的比例 T(每 1/30 秒; Jedi: Fallen Order 中横梁上的髋部)"),
    "Frames of settling on the first frame's pose before the bake starts": (
        "ベイク開始前に最初のフレームのポーズで落ち着かせるフレーム数",
        "烘焙开始前在第一帧姿态上静置的帧数"),
    "Frames over which the cloth blends to the new pose after a cut": (
        "カットの後、クロスが新しいポーズへブレンドするフレーム数", "剪切后布料混合到新姿态所用的帧数"),
    "Free bodies with damping and a speed-dependent distance limit (Jedi: Fallen Order's BD-1)": (
        "減衰と速度に応じた距離制限を持つフリーのボディ(Jedi: Fallen Order の BD-1)",
        "带阻尼和随速度变化的距离限制的自由刚体(Jedi: Fallen Order 的 BD-1)"),
    "From the empty's display type: Sphere → ellipsoid, Cube → box, Single Arrow → plane "
    "(normal local +Z)": (
        "エンプティの表示タイプから: 球 → 楕円体、立方体 → ボックス、単一矢印 → 平面(法線はローカル +Z)",
        "由空物体的显示类型决定: 球体 → 椭球, 立方体 → 盒体, 单箭头 → 平面(法线为局部 +Z)"),
    "Gap kept between a layer and the layer below (self-collision offset)": (
        "レイヤーとその下のレイヤーの間に保つ隙間(自己衝突のオフセット)",
        "层与下层之间保持的间隙(自碰撞偏移)"),
    "Give the mass directly instead of a density": (
        "密度の代わりに質量を直接指定します", "直接指定质量而不是密度"),
    "Gravity acceleration in m/s²": ("重力加速度 (m/s²)", "重力加速度 (m/s²)"),
    "Gravity in m/s²": ("重力 (m/s²)", "重力 (m/s²)"),
    "Half-angle of the cone the wind direction wanders in over time": (
        "風向きが時間とともにさまよう円錐の半角", "风向随时间游移的圆锥半角"),
    "No joint to the body this bone hangs from: the two move as one rigid body, its capsule "
    "running on along this bone and its mass added (a limb bone split into segments, Rigify's "
    "DEF-forearm.L.001); this bone keeps its animated pose relative to that body, and its own "
    "limits and motor are not used": (
        "このボーンがぶら下がるボディとの間に関節を置かない: 両者は一つの剛体として動き、カプセル"
        "はこのボーンに沿って延び、質量は加算される（セグメントに分割された四肢のボーン、Rigify "
        "の DEF-forearm.L.001）。このボーンはそのボディに対するアニメーションの姿勢を保ち、自身の"
        "制限とモーターは使われない",
        "与此骨骼所挂的刚体之间没有关节：两者作为一个刚体运动，胶囊体沿此骨骼延伸，质量相加"
        "（分段的肢体骨骼，Rigify 的 DEF-forearm.L.001）；此骨骼保持相对该刚体的动画姿态，"
        "其自身的限制和马达不被使用"),
    "Half-angles of the elliptical swing cone about the body's local X and Z axes, relative to "
    "the rest pose; 180° = free": (
        "ボディのローカル X・Z 軸まわりの楕円スイング円錐の半角(レストポーズ基準)。180° = 自由",
        "刚体绕局部 X 轴和 Z 轴的椭圆摆动锥半角(相对静止姿态); 180° = 自由"),
    "Centre of the swing cone about local X and Z, relative to the rest pose: a hinge that "
    "bends one way (a knee: 145° of flexion, 10° past straight) has its centre halfway, so the "
    "cone is one-sided; 0 = a symmetric cone": (
        "ローカル X・Z 軸まわりのスイング円錐の中心(レストポーズ基準)。一方向にだけ曲がる"
        "蝶番関節(膝: 屈曲 145°、伸展 10°)は中心を範囲の中ほどに置き、円錐を片側にする。"
        "0 = 対称な円錐",
        "摆动锥绕局部 X 轴和 Z 轴的中心(相对静止姿态): 只向一侧弯曲的铰链关节(膝: 屈曲 "
        "145°, 过伸 10°)把中心放在范围中间, 使摆动锥单侧; 0 = 对称锥"),
    "Heavy and stiff: swings as a piece, settles quickly, barely reacts to wind": (
        "重くて硬い: ひとかたまりで揺れ、すぐ落ち着き、風にはほとんど反応しません",
        "厚重且硬: 整体摆动, 很快静止, 几乎不受风影响"),
    "How far a vertex may go behind the skinned surface along its normal": (
        "頂点が法線方向にスキンの表面の裏側へ行ってよい距離", "顶点沿法线可以退到蒙皮表面之后的距离"),
    "How much of the character's motion through the world the cloth feels (1 = all, 0 = carried "
    "along rigidly)": (
        "キャラクターのワールド内の移動をクロスがどれだけ感じるか(1 = すべて、0 = 剛体的に運ばれる)",
        "布料感受到角色在世界中运动的程度(1 = 全部, 0 = 被刚性带动)"),
    "How much of the character's motion through the world the strands feel (1 = all, 0 = "
    "carried along rigidly; 0.1–0.3 tames fast travel)": (
        "キャラクターのワールド内の移動をストランドがどれだけ感じるか(1 = すべて、0 = 剛体的に運ばれる。"
        "0.1–0.3 で速い移動を抑えます)",
        "发丝感受到角色在世界中运动的程度(1 = 全部, 0 = 被刚性带动; 0.1–0.3 可抑制快速移动)"),
    "How much of the character's travel through the world the rods feel": (
        "キャラクターのワールド内の移動をロッドがどれだけ感じるか", "杆感受到角色在世界中移动的程度"),
    "How much of the wind along a strand is ignored: 1 = only the part perpendicular to the "
    "strand pushes it, so strands lying differently move differently": (
        "ストランドに沿った風をどれだけ無視するか: 1 = ストランドに垂直な成分だけが押すので、"
        "向きの違うストランドは違う動きをします",
        "忽略沿发丝方向的风的程度: 1 = 只有垂直于发丝的分量推动它, 因此朝向不同的发丝运动不同"),
})

MESSAGES.update({
    "How often per second bone chains, hair, cloth, rods and ragdolls read the animation, at "
    "times in seconds shared by every frame rate, so fast motion bakes alike at 24, 25, 30, 50 or 60 fps "
    "(Hz). Higher follows fast keys more closely and costs more scene evaluations. 0 = once per "
    "frame: fastest, but fast motion then depends on the frame rate": (
        "ボーンチェーン・髪・クロス・ロッド・ラグドールがアニメーションを読む毎秒の回数 (Hz)。どのフレームレートでも"
        "共通の秒単位の時刻で読むため、速い動きも 24、25、30、50、60 fps で同じようにベイクされます。"
        "高いほど速いキーに忠実ですが、シーンの評価が増えます。0 = 1 フレームに 1 回: 最速ですが、"
        "速い動きはフレームレートに左右されます",
        "骨链、头发、布料、杆和布娃娃每秒读取动画的次数 (Hz), 读取时刻以秒为单位并在所有帧率间共享, "
        "因此快速运动在 24、25、30、50 或 60 fps 下烘焙结果一致。数值越高越贴近快速关键帧, "
        "但场景求值更多。0 = 每帧一次: 最快, 但快速运动会受帧率影响"),
    "Inextensible strands keep their lengths by an energy-conserving mass-weighted projection "
    "(SHAKE); where it cannot be used for a step (a teleport, a violent jerk) follow-the-leader "
    "takes over, with this velocity correction (DFTL, Müller 2012): 0 = plain "
    "follow-the-leader, 1 = calmest": (
        "伸びないストランドは、エネルギーを保存する質量加重の射影(SHAKE)で長さを保ちます。"
        "それが使えないステップ(瞬間移動、激しい揺さぶり)ではフォロー・ザ・リーダーが引き継ぎ、"
        "この速度補正(DFTL、Müller 2012)を使います: 0 = 素のフォロー・ザ・リーダー、1 = 最も穏やか",
        "不可伸长的发丝通过能量守恒的质量加权投影(SHAKE)保持长度; 某一步无法使用时(瞬移、剧烈抖动)"
        "由跟随领导者算法接管, 并使用此速度修正(DFTL, Müller 2012): 0 = 普通跟随领导者, 1 = 最平稳"),
    "Infinite plane through the origin; local +Z is outside": (
        "原点を通る無限平面。ローカル +Z 側が外側", "穿过原点的无限平面; 局部 +Z 为外侧"),
    "Inter-hair friction and cohesion: blend each particle's velocity toward the mean velocity "
    "of its voxel cell (fraction per 1/60 s; 0 = off)": (
        "髪同士の摩擦とまとまり: 各パーティクルの速度を、そのボクセルセルの平均速度へブレンドします"
        "(1/60 秒あたりの割合。0 = オフ)",
        "发丝间的摩擦与聚合: 将每个粒子的速度向其体素单元的平均速度混合(每 1/60 秒的比例; 0 = 关闭)"),
    "Keep each particle within its rest length along the chain from the root (long-range "
    "attachment; stops the chain from stretching under load)": (
        "各パーティクルを根元からチェーンに沿ったレスト長以内に保ちます(長距離アタッチメント。"
        "荷重でチェーンが伸びるのを防ぎます)",
        "使每个粒子保持在从根部沿骨链的静止长度以内(长程附着; 防止骨链在负载下拉长)"),
    "Keep each segment's rest direction relative to its parent segment, so curls and bangs keep "
    "their shape while the strand swings (fraction of the error removed per 1/60 s; 0 = off)": (
        "各セグメントの親セグメントに対するレスト方向を保ち、ストランドが揺れてもカールや前髪の形を"
        "保ちます(1/60 秒あたりに取り除く誤差の割合。0 = オフ)",
        "保持每段相对父段的静止方向, 使发丝摆动时卷发和刘海保持形状(每 1/60 秒消除的误差比例; 0 = 关闭)"),
    "Keep vertices in front of the skinned surface (along its normal)": (
        "頂点をスキンの表面の手前(法線方向)に保ちます", "使顶点保持在蒙皮表面之前(沿法线方向)"),
    "Keeps its curve near the root, whips at the tip": (
        "根元ではカーブを保ち、先端はしなります", "根部保持弧度, 尖端甩动"),
    "Key the overriding constraints' influence to 0 in Waft's result (muting or clearing the "
    "result gives them back)": (
        "Waft の結果で、上書きするコンストレイントの影響をキーで 0 にします(結果をミュートまたは"
        "消去すると元に戻ります)",
        "在 Waft 的结果中将覆盖性约束的影响打关键帧为 0(静音或清除结果即可恢复)"),
    "Kinematic, driven by motors toward the animation, or free": (
        "キネマティック、モーターでアニメーションへ駆動、またはフリー", "运动学、由马达驱动趋向动画, 或自由"),
    "Level of detail: points of each render strand, sampled on the uniform cubic B-spline "
    "through the guide particles (Alice: Madness Returns)": (
        "詳細度: 各レンダーストランドの点数。ガイドのパーティクルを通る一様 3 次 B スプライン上で"
        "サンプリングします(Alice: Madness Returns)",
        "细节级别: 每根渲染发丝的点数, 在穿过引导粒子的均匀三次 B 样条上采样(Alice: Madness Returns)"),
    "Light and slippery: folds at once, follows the air, keeps rippling": (
        "軽く滑らか: すぐに折れ、空気に従い、波打ち続けます", "轻而滑: 立即折叠, 随空气飘动, 持续起伏"),
    "Linear velocity decays at this rate per second (air drag)": (
        "直線速度がこの割合で毎秒減衰します(空気抵抗)", "线速度以此速率每秒衰减(空气阻力)"),
    "Local-space blend of the output toward the animation: 0 = physics only, 1 = the animation "
    "(Jedi: Fallen Order kept 40–50 % physics: 0.5–0.6)": (
        "出力をアニメーションへローカル空間でブレンドします: 0 = 物理のみ、1 = アニメーション"
        "(Jedi: Fallen Order は物理を 40–50 % 残しました: 0.5–0.6)",
        "输出向动画的局部空间混合: 0 = 仅物理, 1 = 动画(Jedi: Fallen Order 保留 40–50 % 物理: 0.5–0.6)"),
    "Long hair strands that swing freely and settle under gravity": (
        "自由に揺れ、重力で落ち着く長い髪", "自由摆动并在重力下静止的长发"),
    "Long straight strands, exact lengths, free below the scalp": (
        "長いストレートのストランド。長さは正確で、頭皮より下は自由", "长直发丝, 长度精确, 头皮以下自由"),
    "Loose dangling parts with little memory of their shape": (
        "形をほとんど覚えていない、ゆるく垂れ下がるパーツ", "几乎不保持形状的松散下垂部件"),
    "Make the active mesh a Waft cloth cage and map the armature's bones to its grid": (
        "アクティブなメッシュを Waft のクロスケージにし、アーマチュアのボーンをそのグリッドに対応付けます",
        "将活动网格设为 Waft 布料笼, 并将骨架的骨骼映射到其网格"),
    "Make the selected pose bones rigid bodies of a Waft ragdoll, with humanoid defaults": (
        "選択したポーズボーンを、人型の既定値で Waft ラグドールの剛体にします",
        "将选中的姿态骨骼设为 Waft 布娃娃的刚体, 使用人形默认值"),
    "Make your original action active again to edit it (Waft's result is hidden under it where "
    "both key a channel); bake again to simulate on the edited motion": (
        "元のアクションを再びアクティブにして編集できるようにします(両方がキーを持つチャンネルでは"
        "Waft の結果はその下に隠れます)。編集した動きでシミュレートするには再度ベイクします",
        "重新激活您的原始动作以便编辑(两者都有关键帧的通道中 Waft 的结果隐藏在其下); "
        "再次烘焙即可基于编辑后的运动模拟"),
    "Mass of the body (kg) when Use Mass is on": (
        "質量を使用がオンのときのボディの質量 (kg)", "启用使用质量时刚体的质量 (kg)"),
    "Max-distance multiplier on edge vertices": ("縁の頂点の最大距離の倍率", "边缘顶点的最大距离倍数"),
    "Mean wind velocity in m/s": ("平均風速 (m/s)", "平均风速 (m/s)"),
    "Mesh colliders: how far inside the surface a particle is still found and pushed out. "
    "Deeper costs more; thin parts (fingers, ears) thinner than this can let a fast particle "
    "through to the other side": (
        "メッシュコライダー: 表面からどれだけ内側まで粒子を見つけて押し出すか。深いほど重くなります。"
        "これより薄い部分(指、耳)では速い粒子が反対側へ抜けることがあります",
        "网格碰撞体: 粒子在表面以内多深仍会被找到并推出。越深越慢; 比此值更薄的部分(手指、耳朵)"
        "可能让快速的粒子穿到另一侧"),
    "Mesh the render strands grow from; roots follow its evaluated (skinned or parented) surface "
    "every frame": (
        "レンダーストランドが生えるメッシュ。根元は毎フレーム評価後の(スキンまたはペアレントされた)"
        "表面に従います",
        "渲染发丝生长的网格; 发根每帧跟随其求值后(蒙皮或父级)的表面"),
    "Minimum and maximum twist about the bone's axis (local Y), relative to the rest pose": (
        "ボーン軸(ローカル Y)まわりのねじれの最小と最大(レストポーズ基準)",
        "绕骨骼轴(局部 Y)扭转的最小值和最大值(相对静止姿态)"),
    "Multiplier of the scene gravity": ("シーンの重力の倍率", "场景重力的倍数"),
    "Multipliers of the bend-twist stiffness about each bone axis (x, y = twist, z): a ribbon is "
    "stiff across (x) and soft along its face (z)": (
        "各ボーン軸まわりの曲げ・ねじり剛性の倍率(x、y = ねじれ、z): リボンは横方向 (x) に硬く、"
        "面に沿って (z) 柔らかい",
        "绕各骨骼轴的弯曲-扭转刚度倍数(x, y = 扭转, z): 丝带横向 (x) 硬, 沿面方向 (z) 软"),
    "Multiplies every vertex's max distance (key it to loosen the cloth)": (
        "すべての頂点の最大距離に掛けます(キーを打ってクロスを緩められます)",
        "乘以每个顶点的最大距离(对其打关键帧可放松布料)"),
    "No motors, no root lock: falls as a ragdoll": (
        "モーターなし、ルート固定なし: ラグドールとして倒れます", "无马达, 不锁定根部: 作为布娃娃倒下"),
    "Noise seed; the same seed gives the same wind": (
        "ノイズのシード。同じシードなら同じ風になります", "噪声种子; 相同种子产生相同的风"),
    "Number of render strands, placed by face area × density": (
        "レンダーストランドの本数。面積 × 密度に応じて配置します", "渲染发丝数量, 按面面积 × 密度分布"),
    "Only Waft colliders in this collection touch the cloth; empty = every Waft collider in the "
    "scene": (
        "このコレクションの Waft コライダーだけがクロスに触れます。空 = シーンのすべての Waft コライダー",
        "只有此集合中的 Waft 碰撞体接触布料; 留空 = 场景中所有 Waft 碰撞体"),
    "Only Waft colliders in this collection touch the rods; empty = all": (
        "このコレクションの Waft コライダーだけがロッドに触れます。空 = すべて",
        "只有此集合中的 Waft 碰撞体接触杆; 留空 = 全部"),
    "Only Waft colliders in this collection touch this ragdoll; empty = every Waft collider in "
    "the scene": (
        "このコレクションの Waft コライダーだけがこのラグドールに触れます。空 = シーンのすべての"
        "Waft コライダー",
        "只有此集合中的 Waft 碰撞体接触此布娃娃; 留空 = 场景中所有 Waft 碰撞体"),
    "Only Waft colliders in this collection touch this setup; empty = every Waft collider in the "
    "scene": (
        "このコレクションの Waft コライダーだけがこのセットアップに触れます。空 = シーンのすべての"
        "Waft コライダー",
        "只有此集合中的 Waft 碰撞体接触此设置; 留空 = 场景中所有 Waft 碰撞体"),
    "Part of each strand, from the root, on which Shape Stiffness acts (1 = whole strand; low "
    "values keep only the scalp part of the shape)": (
        "形状の剛性が働く、根元からのストランドの範囲(1 = ストランド全体。低い値では頭皮付近の形状"
        "だけを保ちます)",
        "形状刚度作用的发丝范围(从根部算起; 1 = 整根发丝; 数值低时只保留头皮附近的形状)"),
    "Per-strand phase of the gusts and direction changes: 0 = every strand in step, 1 = strands "
    "move out of step": (
        "突風と向きの変化のストランドごとの位相: 0 = すべて同調、1 = ばらばらに動きます",
        "阵风和风向变化的每根发丝相位: 0 = 所有发丝同步, 1 = 发丝各自错开运动"),
    "Per-strand random tip offset as a fraction of the strand length (grows from root to tip)": (
        "ストランドごとのランダムな先端オフセット(ストランド長に対する割合。根元から先端へ増加)",
        "每根发丝的随机尖端偏移, 占发丝长度的比例(从根部到尖端递增)"),
    "Physics of the hair Curves guides (the same settings as a bone chain's)": (
        "髪のカーブガイドの物理(ボーンチェーンと同じ設定)", "头发曲线引导线的物理(与骨链相同的设置)"),
    "Pinned vertices follow the cage's own Armature modifier (its evaluated, skinned shape)": (
        "固定頂点はケージ自身のアーマチュアモディファイアー(評価後のスキン形状)に従います",
        "固定顶点跟随笼自身的骨架修改器(求值后的蒙皮形状)"),
    "Pinned vertices stick to the nearest triangle of the body mesh by barycentric coordinates "
    "(StrayCloth): shoulders, waist and elbows where one bone is not enough": (
        "固定頂点は体のメッシュの最も近い三角形に重心座標で貼り付きます(StrayCloth): ボーン 1 本では"
        "足りない肩・腰・肘に",
        "固定顶点以重心坐标附着到身体网格上最近的三角形(StrayCloth): 适用于单根骨骼不够的肩、腰、肘"),
    "Pull of the motor toward the animation's local rotation: a spring of 2 Hz × s / (1 − s) "
    "(1 = reproduce it exactly); the same at any frame rate and substep. The root has no motor "
    "(see Lock Root)": (
        "アニメーションのローカル回転へ向かうモーターの引き: 2 Hz × s / (1 − s) のばね"
        "(1 = 正確に再現)。どのフレームレートやサブステップでも同じです。ルートにはモーターは"
        "ありません(ルートを固定を参照)",
        "马达朝动画局部旋转的拉力: 2 Hz × s / (1 − s) 的弹簧(1 = 精确重现); 在任何帧率和子步下相同。"
        "根部没有马达(见锁定根部)"),
    "Pull of this bone's tail toward its animated position, fraction of the gap closed per "
    "1/60 s": (
        "このボーンのテールをアニメーション位置へ引く強さ(1/60 秒あたりに縮める差の割合)",
        "此骨骼尾端朝动画位置的拉力, 每 1/60 秒缩小差距的比例"),
    "Pull toward the animated pose: fraction of the gap closed per 1/60 s (0 = free, 1 = follows "
    "the animation)": (
        "アニメーションのポーズへ引く強さ: 1/60 秒あたりに縮める差の割合(0 = 自由、1 = アニメーションに従う)",
        "朝动画姿态的拉力: 每 1/60 秒缩小差距的比例(0 = 自由, 1 = 跟随动画)"),
    "Remove the baked Waft result and make the original action active again": (
        "ベイクした Waft の結果を削除し、元のアクションを再びアクティブにします",
        "移除烘焙的 Waft 结果, 并重新激活原始动作"),
    "Resist bending at every joint (see Bend Compliance)": (
        "すべての関節で曲げに抵抗します(曲げコンプライアンスを参照)", "在每个关节处抵抗弯曲(见弯曲柔度)"),
    "Restitution: the share of its approach speed a body keeps when it hits a collider or the "
    "ground (0 = no bounce, 1 = elastic)": (
        "反発係数: コライダーや地面に当たったときにボディが保つ接近速度の割合(0 = 跳ねない、1 = 完全弾性)",
        "恢复系数: 刚体撞击碰撞体或地面时保留的接近速度比例(0 = 不反弹, 1 = 完全弹性)"),
    "Root-to-tip falloff of Shape Stiffness: particle i gets stiffness^(1 + decay·(i−1)), so "
    "tips move more freely": (
        "形状の剛性の根元から先端への減衰: パーティクル i の剛性は stiffness^(1 + decay·(i−1)) に"
        "なり、先端ほど自由に動きます",
        "形状刚度从根部到尖端的衰减: 第 i 个粒子的刚度为 stiffness^(1 + decay·(i−1)), 因此尖端更自由"),
    "Save the active object's chain and hair settings as a preset in your Blender preset folder, "
    "or remove one you saved": (
        "アクティブオブジェクトのチェーンと髪の設定を Blender のプリセットフォルダーに保存、"
        "または保存したものを削除します",
        "将活动物体的骨链和头发设置保存为您 Blender 预设文件夹中的预设, 或删除已保存的预设"),
    "Save the active object's fabric settings as a preset in your Blender preset folder, or "
    "remove one you saved": (
        "アクティブオブジェクトの生地の設定を Blender のプリセットフォルダーに保存、または保存した"
        "ものを削除します",
        "将活动物体的面料设置保存为您 Blender 预设文件夹中的预设, 或删除已保存的预设"),
    "Save the active object's ragdoll settings as a preset in your Blender preset folder, or "
    "remove one you saved": (
        "アクティブオブジェクトのラグドールの設定を Blender のプリセットフォルダーに保存、"
        "または保存したものを削除します",
        "将活动物体的布娃娃设置保存为您 Blender 预设文件夹中的预设, 或删除已保存的预设"),
    "Scene frame the settled pose was captured at": (
        "落ち着いたポーズをキャプチャしたシーンフレーム", "捕捉静置姿态时的场景帧"),
    "Seconds after the fall before the blend back to the animation starts": (
        "転倒からアニメーションへのブレンドが始まるまでの秒数", "跌倒后开始混合回动画前的秒数"),
    "Seconds the blend back to the animation takes (smooth in and out)": (
        "アニメーションへ戻るブレンドにかかる秒数(緩やかに始まり緩やかに終わる)",
        "混合回动画所需的秒数(缓入缓出)"),
    "Seed of root placement and randomness; the same seed gives the same hair": (
        "根元の配置とランダムさのシード。同じシードなら同じ髪になります",
        "发根分布和随机性的种子; 相同种子产生相同的头发"),
    "Seeded noise on the wind, relative to the wind speed": (
        "風に加えるシード付きノイズ(風速に対する割合)", "叠加在风上的种子噪声(相对风速)"),
    "Segment ±Display Size along local Z with radii A (at −Z) and B (at +Z)": (
        "ローカル Z に沿った ±表示サイズの線分。半径 A(−Z 側)と B(+Z 側)",
        "沿局部 Z 轴 ±显示尺寸的线段, 半径为 A(−Z 端)和 B(+Z 端)"),
    "Set the active Waft setup's settings from a preset": (
        "アクティブな Waft セットアップの設定をプリセットから設定します", "用预设设置活动 Waft 设置的参数"),
    "Set the active cloth cage's settings from a fabric (tweed, silk, leather, ...)": (
        "アクティブなクロスケージの設定を生地(ツイード、シルク、革など)から設定します",
        "用面料(粗花呢、丝绸、皮革等)设置活动布料笼的参数"),
    "Set the mode of the selected ragdoll bodies": (
        "選択したラグドールのボディのモードを設定します", "设置选中布娃娃刚体的模式"),
    "Set the ragdoll's and its bodies' behaviour from a preset": (
        "ラグドールとそのボディのふるまいをプリセットから設定します", "用预设设置布娃娃及其刚体的行为"),
    "Sheer and weightless: floats on the slightest air, no bending resistance": (
        "薄くて重さがない: わずかな空気で浮き、曲げに抵抗しません", "轻薄无重: 轻微气流即可飘起, 没有弯曲阻力"),
    "Short hair or fur that springs back quickly": (
        "すぐに元に戻る短い髪や毛皮", "快速回弹的短发或毛皮"),
    "Simulate the bone chains, cloth cages, rods, ragdolls and hair guides while the timeline "
    "plays, with the bake's own solvers, from the first frame (no keys are written, hair guides "
    "are drawn; played from the first frame it shows exactly what Bake writes). Simulated frames "
    "are kept for scrubbing; any change to a setting, a collider or the animation starts it over": (
        "タイムライン再生中にベイクと同じソルバーでボーンチェーン・クロスケージ・ロッド・"
        "ラグドール・髪のガイドを最初のフレームからシミュレートします（キーは書き込まず、髪のガイドは線で表示します。最初のフレーム"
        "から再生すると、ベイクが書き込む結果とまったく同じになります）。シミュレート済みのフレームは"
        "スクラブ用に保持され、設定・コライダー・アニメーションを変更するとやり直します",
        "在时间线播放时用与烘焙相同的求解器从第一帧起模拟骨骼链、布料笼、杆、布娃娃和头发引导线"
        "（不写入关键帧，"
        "头发引导线以线条绘制；从第一帧播放时与烘焙写入的结果完全相同）。已模拟的帧会保留以便拖动"
        "时间线；更改设置、碰撞体或动画会重新开始"),
    "Simulate the Waft setups and write the result to a new action on the Waft NLA track": (
        "Waft セットアップをシミュレートし、結果を Waft NLA トラック上の新しいアクションに書き込みます",
        "模拟 Waft 设置, 并将结果写入 Waft NLA 轨道上的新动作"),
    "Simulate the active cloth cage, bone chains or hair guides from the start frame to the "
    "current frame and save how they hang there; with Settled Pose on, bakes start, and restart "
    "after cuts, from it instead of from the animation": (
        "アクティブなクロスケージ、ボーンチェーン、髪ガイドを開始フレームから現在のフレームまで"
        "シミュレートし、そこでの垂れ下がり方を保存します。落ち着いたポーズがオンなら、ベイクは"
        "アニメーションではなくこのポーズから始まり、カットの後もここから再開します",
        "从起始帧模拟活动布料笼、骨链或头发引导线到当前帧, 并保存它们在此处的下垂姿态; 启用静置姿态时, "
        "烘焙及剪切后的重新开始都从该姿态而不是动画开始"),
    "Simulate the chains starting at the selected pose bones as rods (or stop)": (
        "選択したポーズボーンから始まるチェーンをロッドとしてシミュレートします(または停止)",
        "将从选中姿态骨骼开始的骨链作为杆模拟(或停止)"),
    "Simulate the selected pose bones (making the armature a Waft setup), or stop simulating": (
        "選択したポーズボーンをシミュレートします(アーマチュアを Waft セットアップにします)。"
        "またはシミュレートをやめます",
        "模拟选中的姿态骨骼(使骨架成为 Waft 设置), 或停止模拟"),
    "Simulate this armature's flagged bone chains when baking": (
        "ベイク時にこのアーマチュアの指定したボーンチェーンをシミュレートします",
        "烘焙时模拟此骨架中标记的骨链"),
    "Simulate this armature's ragdoll bodies when baking": (
        "ベイク時にこのアーマチュアのラグドールのボディをシミュレートします", "烘焙时模拟此骨架的布娃娃刚体"),
})

MESSAGES.update({
    "Bake and clear every Waft setup of the scene, and the scene's solver settings": (
        "シーンのすべての Waft セットアップのベイクと消去、およびシーンのソルバー設定",
        "烘焙和清除场景中所有 Waft 设置, 以及场景的求解器设置"),
    "Simulate this armature's rod chains (ties, ribbons, hoods) when baking": (
        "ベイク時にこのアーマチュアのロッドチェーン(ネクタイ、リボン、フード)をシミュレートします",
        "烘焙时模拟此骨架的杆链(领带、丝带、兜帽)"),
    "Simulate this cage and drive the mapped bones with it when baking": (
        "ベイク時にこのケージをシミュレートし、対応付けたボーンを駆動します",
        "烘焙时模拟此笼并用它驱动映射的骨骼"),
    "Simulate this hair Curves object's curves as guides when baking (roots follow its Surface "
    "mesh)": (
        "ベイク時にこの髪のカーブオブジェクトのカーブをガイドとしてシミュレートします"
        "(根元はサーフェスメッシュに従います)",
        "烘焙时将此头发曲线物体的曲线作为引导线模拟(发根跟随其表面网格)"),
    "Simulated chains, hair and cloth collide with this object: an empty with a shape, or a "
    "mesh (its deformed surface, e.g. the character's body)": (
        "シミュレートするチェーン・髪・布はこのオブジェクトと衝突します: 形状を持つエンプティ、"
        "またはメッシュ(変形後の表面、例: キャラクターの体)",
        "模拟的骨链、头发和布料与此物体碰撞: 带形状的空物体, 或网格(其变形后的表面, 例如角色的身体)"),
    "Simulated without motors: a limp ragdoll part": (
        "モーターなしでシミュレート: 脱力したラグドールの部位", "无马达模拟: 瘫软的布娃娃部位"),
    "Simulated; motors pull its rotation toward the animation's": (
        "シミュレートします。モーターが回転をアニメーションの回転へ引きます", "参与模拟; 马达将其旋转拉向动画的旋转"),
    "Simulation steps per second (Hz) for this ragdoll; 0 = the scene's. Ragdolls baked "
    "together use the highest rate among them": (
        "このラグドールの毎秒のシミュレーションステップ数 (Hz)。0 = シーンの値。一緒にベイクする"
        "ラグドールはその中の最大値を使います",
        "此布娃娃每秒的模拟步数 (Hz); 0 = 场景设置。一起烘焙的布娃娃使用其中的最高频率"),
    "Simulation steps per second (Hz), fixed whatever the frame rate": (
        "毎秒のシミュレーションステップ数 (Hz)。フレームレートにかかわらず一定",
        "每秒模拟步数 (Hz), 与帧率无关地固定"),
    "Slow seeded gusts, relative to the wind speed": (
        "ゆっくりしたシード付きの突風(風速に対する割合)", "缓慢的种子阵风(相对风速)"),
    "Softness of bending at each joint, in m/N (XPBD compliance of each particle's offset from "
    "its neighbours' midpoint): 0 = rigid, 1e-5 = stiff, 5e-5 = bends under its own weight, "
    "1e-3 and up = as soft as no bending": (
        "各関節の曲げの柔らかさ (m/N)(各パーティクルの、隣接 2 点の中点からのずれの XPBD "
        "コンプライアンス): 0 = 剛体、1e-5 = 硬い、5e-5 = 自重で曲がる、1e-3 以上 = 曲げ抵抗なしと同じ",
        "每个关节的弯曲柔软度 (m/N)(每个粒子相对相邻两点中点偏移的 XPBD 柔度): 0 = 刚性, "
        "1e-5 = 硬, 5e-5 = 在自重下弯曲, 1e-3 及以上 = 相当于没有弯曲阻力"),
    "Solve the vertical links top-down as hard constraints, so the cloth never stretches "
    "vertically (Alan Wake)": (
        "縦のリンクを上から下へハードコンストレイントとして解き、クロスが縦に伸びないようにします"
        "(Alan Wake)",
        "自上而下将竖向连接作为硬约束求解, 使布料永不竖向拉伸(Alan Wake)"),
    "Sphere of radius Display Size; non-uniform scale makes an ellipsoid": (
        "半径が表示サイズの球。不均一なスケールで楕円体になります", "半径为显示尺寸的球体; 非均匀缩放构成椭球"),
    "Springs back to the animation quickly, heavily damped": (
        "すばやくアニメーションへ戻り、強く減衰します", "快速回弹到动画, 阻尼很大"),
    "Start the chains, and restart them after animation cuts, from the pose saved with Capture "
    "Settled Pose instead of from the animation, so a shot begins with tails and hair already "
    "hanging (a saved physics pose track, as in cutscene cloth tools)": (
        "チェーンを、アニメーションではなく「落ち着いたポーズをキャプチャ」で保存したポーズから"
        "開始し、アニメーションのカット後もそこから再開します。ショットの始めからしっぽや髪が"
        "垂れ下がった状態になります(カットシーン用クロスツールの物理ポーズトラックと同じ)",
        "骨链从用捕捉静置姿态保存的姿态(而不是动画)开始, 动画剪切后也从它重新开始, 使镜头一开始"
        "尾巴和头发就已自然下垂(如过场动画布料工具中保存的物理姿态轨道)"),
    "Start the cloth, and restart it after cuts and at Reset Frames, from the pose saved with "
    "Capture Settled Pose instead of from the skinned cage, so a shot begins with the cloth "
    "already hanging (a saved physics pose track, as in cutscene cloth tools)": (
        "クロスを、スキンのケージではなく「落ち着いたポーズをキャプチャ」で保存したポーズから開始し、"
        "カット後やリセットフレームでもそこから再開します。ショットの始めからクロスが垂れ下がった"
        "状態になります(カットシーン用クロスツールの物理ポーズトラックと同じ)",
        "布料从用捕捉静置姿态保存的姿态(而不是蒙皮笼)开始, 剪切后和重置帧处也从它重新开始, "
        "使镜头一开始布料就已自然下垂(如过场动画布料工具中保存的物理姿态轨道)"),
    "Starting point for the bodies' settings; applied with Apply Preset": (
        "ボディの設定の出発点。プリセットを適用で適用します", "刚体设置的起点; 通过应用预设来应用"),
    "Starting point for the settings; applied with Apply Preset": (
        "設定の出発点。プリセットを適用で適用します", "设置的起点; 通过应用预设来应用"),
    "Strand radius at the root (the radius attribute)": (
        "根元のストランド半径(radius 属性)", "发根处的发丝半径(radius 属性)"),
    "Strand radius at the tip": ("先端のストランド半径", "尖端处的发丝半径"),
    "Strands gather toward their nearest guide from root (0) to tip (this fraction)": (
        "ストランドは根元 (0) から先端(この割合)にかけて最寄りのガイドへ集まります",
        "发丝从根部 (0) 到尖端(此比例)向最近的引导线聚拢"),
    "Stretchy and bouncy: lengthens under load and springs back": (
        "伸びて弾む: 荷重で伸び、元に戻ります", "有弹性: 受力拉长后回弹"),
    "Strong motors, root locked with a fall threshold: follows the animation, collides, falls "
    "when blocked (Jedi: Fallen Order's stormtrooper)": (
        "強いモーターと転倒しきい値付きのルート固定: アニメーションに従い、衝突し、阻まれると倒れます"
        "(Jedi: Fallen Order のストームトルーパー)",
        "强马达, 根部锁定并带跌倒阈值: 跟随动画, 参与碰撞, 受阻时倒下(Jedi: Fallen Order 的风暴兵)"),
    "Target speed at which the distance limit has shrunk to zero and locks the body to its "
    "target (Jedi: Fallen Order's BD-1 head); 0 = never shrinks": (
        "距離制限がゼロまで縮み、ボディを目標に固定する目標速度(Jedi: Fallen Order の BD-1 の頭)。"
        "0 = 縮まない",
        "距离限制缩小到零并将刚体锁定到目标时的目标速度(Jedi: Fallen Order 中 BD-1 的头); 0 = 不缩小"),
    "The body stays within this distance of its animation target, rotation free (Jedi: Fallen "
    "Order's wrists: 5–25 cm); 0 = off": (
        "ボディはアニメーション目標からこの距離以内にとどまり、回転は自由です(Jedi: Fallen Order の"
        "手首: 5–25 cm)。0 = オフ",
        "刚体保持在其动画目标的此距离以内, 旋转自由(Jedi: Fallen Order 的手腕: 5–25 cm); 0 = 关闭"),
    "The bone that carries the character through the world when travel is keyed on a bone (root "
    "motion in glTF, Mixamo and most game rigs): World Motion is measured in its space. Empty: "
    "the armature object's": (
        "移動がボーンにキーされている場合(glTF、Mixamo、多くのゲーム用リグのルートモーション)に"
        "キャラクターをワールド内で運ぶボーン: ワールド移動はその空間で測ります。空: "
        "アーマチュアオブジェクトの空間",
        "当位移关键帧在骨骼上时(glTF、Mixamo 和大多数游戏绑定的根运动)带动角色在世界中移动的骨骼: "
        "世界运动在其空间中测量。留空: 使用骨架物体的空间"),
    "The carrier's body bone this ragdoll's root hangs on": (
        "このラグドールのルートがぶら下がるキャリアのボディのボーン", "此布娃娃根部所挂靠的承载者刚体骨骼"),
    "The root body keeps all six degrees of freedom on its animation target (a strong "
    "constraint, so it still collides), until the fall threshold": (
        "ルートボディは転倒しきい値に達するまで、6 自由度すべてをアニメーション目標に保ちます"
        "(強いコンストレイントなので衝突はします)",
        "根刚体在达到跌倒阈值前六个自由度都保持在动画目标上(强约束, 因此仍会碰撞)"),
    "Thick padded shell: puffy, damped by the air inside, moves in slow lumps": (
        "厚い中綿入りの外殻: ふくらみ、中の空気で減衰し、ゆっくりかたまりで動きます",
        "厚实的填充外壳: 蓬松, 被内部空气减震, 成块缓慢运动"),
    "This bone is a rigid body of the ragdoll (a capsule along the bone)": (
        "このボーンはラグドールの剛体です(ボーンに沿ったカプセル)", "此骨骼是布娃娃的刚体(沿骨骼的胶囊体)"),
    "This bone is part of a simulated chain (chains are runs of such bones)": (
        "このボーンはシミュレートするチェーンの一部です(チェーンはこのようなボーンの連なり)",
        "此骨骼属于模拟骨链(骨链由连续的此类骨骼组成)"),
    "This ragdoll's bodies collide with those of the other ragdolls baked together that have "
    "this on too (not with a carrier or what it carries)": (
        "このラグドールのボディは、一緒にベイクする他のラグドールのうちこれがオンのもののボディと"
        "衝突します(キャリアや運ばれるものとは衝突しません)",
        "此布娃娃的刚体与一起烘焙且也开启此项的其他布娃娃的刚体碰撞(不与承载者或其承载物碰撞)"),
    "Turn on render strands for the active guide armature (or hair Curves guides); a selected "
    "mesh becomes the scalp": (
        "アクティブなガイドのアーマチュア(または髪のカーブガイド)でレンダーストランドをオンにします。"
        "選択したメッシュが頭皮になります",
        "为活动引导骨架(或头发曲线引导线)开启渲染发丝; 选中的网格作为头皮"),
    "Use this bone's own stiffness, damping and radius": (
        "このボーン独自の剛性・減衰・半径を使います", "使用此骨骼自己的刚度、阻尼和半径"),
    "Velocity decay of this bone's tail per second (1/s)": (
        "このボーンのテールの毎秒の速度減衰 (1/s)", "此骨骼尾端每秒的速度衰减 (1/s)"),
    "Velocity decays as exp(-damping·t), per second (1/s)": (
        "速度は exp(-damping·t) で減衰します。毎秒 (1/s)", "速度按 exp(-damping·t) 衰减, 每秒 (1/s)"),
    "Velocity decays as exp(−damping·t), per second (1/s); the same at any frame rate": (
        "速度は exp(−damping·t) で減衰します。毎秒 (1/s)。どのフレームレートでも同じです",
        "速度按 exp(−damping·t) 衰减, 每秒 (1/s); 在任何帧率下相同"),
    "Vertex group of the scalp scaling the strand density (empty = uniform)": (
        "ストランドの密度を調整する頭皮の頂点グループ(空 = 均一)", "缩放发丝密度的头皮顶点组(留空 = 均匀)"),
    "Vertex group of the vertices that follow the character exactly (weight > 0.5 = pinned)": (
        "キャラクターに正確に従う頂点の頂点グループ(ウェイト > 0.5 = 固定)",
        "严格跟随角色的顶点所在的顶点组(权重 > 0.5 = 固定)"),
    "Vertex group scaling Max Distance per vertex (paint it larger at the hem); empty = the same "
    "for every vertex": (
        "頂点ごとに最大距離を調整する頂点グループ(裾ほど大きく塗ります)。空 = すべての頂点で同じ",
        "按顶点缩放最大距离的顶点组(下摆处画得更大); 留空 = 每个顶点相同"),
    "Vertices of this layer; layer L collides one-sidedly with layer L-1": (
        "このレイヤーの頂点。レイヤー L はレイヤー L-1 と片側だけで衝突します",
        "此层的顶点; 第 L 层与第 L-1 层单侧碰撞"),
    "Weak motors and a 40 % local blend: inertia and lag on top of a walk or run": (
        "弱いモーターと 40 % のローカルブレンド: 歩きや走りに慣性と遅れを加えます",
        "弱马达和 40 % 局部混合: 在走或跑的基础上加入惯性和滞后"),
    "When the root body is held this far from its animation target (it hit a wall), the root "
    "lock releases for good and the ragdoll falls freely; 0 = never": (
        "ルートボディがアニメーション目標からこの距離だけ離されると(壁にぶつかった)、ルート固定は"
        "完全に解除され、ラグドールは自由に倒れます。0 = 解除しない",
        "根刚体被阻离其动画目标达到此距离时(撞墙), 根部锁定永久解除, 布娃娃自由倒下; 0 = 从不"),
    "Wind velocity in m/s": ("風速 (m/s)", "风速 (m/s)"),
    "World height of the ground plane": ("地面のワールド高さ", "地面平面的世界高度"),
    "World-motion multiplier on edge vertices": ("縁の頂点のワールド移動の倍率", "边缘顶点的世界运动倍数"),
    "Write a hair Curves object of render strands that follow the baked guides": (
        "ベイクしたガイドに従うレンダーストランドの髪カーブオブジェクトを書き出します",
        "写出跟随烘焙引导线的渲染发丝头发曲线物体"),
    "XPBD compliance (m/N) keeping each bone along its segment; 0 = rigid": (
        "各ボーンをそのセグメントに沿わせる XPBD コンプライアンス (m/N)。0 = 剛体",
        "使每根骨骼沿其线段的 XPBD 柔度 (m/N); 0 = 刚性"),
    "XPBD compliance of bending and twisting between neighbouring bones (the first bone bends "
    "against its animated orientation)": (
        "隣り合うボーン間の曲げとねじりの XPBD コンプライアンス(最初のボーンはアニメーションの"
        "向きに対して曲がります)",
        "相邻骨骼间弯曲和扭转的 XPBD 柔度(第一根骨骼相对其动画朝向弯曲)"),
    "XPBD compliance of each segment's length in m/N; 0 = inextensible": (
        "各セグメントの長さの XPBD コンプライアンス (m/N)。0 = 伸びない", "每段长度的 XPBD 柔度 (m/N); 0 = 不可伸长"),
    "XPBD compliance of the links between neighbouring chains (keeps skirts from opening gaps) "
    "in m/N": (
        "隣り合うチェーン間のリンクの XPBD コンプライアンス (m/N)(スカートに隙間が開くのを防ぎます)",
        "相邻骨链间连接的 XPBD 柔度 (m/N)(防止裙子裂开缝隙)"),
    "XPBD compliance of the quad diagonals (shear) in m/N": (
        "四角形の対角線(せん断)の XPBD コンプライアンス (m/N)", "四边形对角线(剪切)的 XPBD 柔度 (m/N)"),
    "XPBD compliance of the skip-one links (bending) in m/N": (
        "1 つ飛ばしのリンク(曲げ)の XPBD コンプライアンス (m/N)", "隔一连接(弯曲)的 XPBD 柔度 (m/N)"),
    "XPBD compliance of the structural (stretch) links in m/N; 0 = inextensible": (
        "構造(伸び)リンクの XPBD コンプライアンス (m/N)。0 = 伸びない", "结构(拉伸)连接的 XPBD 柔度 (m/N); 0 = 不可伸长"),
})

# Fixed labels the panels draw
MESSAGES.update({
    "Assign Bones": ("ボーンを割り当て", "分配骨骼"),
    "Assign Rods": ("ロッドを割り当て", "分配杆"),
    "Bake Active": ("アクティブをベイク", "烘焙活动项"),
    "Bake All": ("すべてベイク", "全部烘焙"),
    "Bake again to simulate on the edit": (
        "編集した動きでシミュレートするには再度ベイクします", "再次烘焙以基于编辑结果模拟"),
    "Clear Bake": ("ベイクを消去", "清除烘焙"),
    "Create Ragdoll": ("ラグドールを作成", "创建布娃娃"),
    "Drive": ("駆動", "驱动"),
    "Joint": ("関節", "关节"),
    "Layers (bottom first)": ("レイヤー(下から順に)", "层(从下往上)"),
    "NLA track 'Waft: original' under Waft": (
        "Waft の下の NLA トラック 'Waft: original'", "Waft 下方的 NLA 轨道 'Waft: original'"),
    "Remove": ("削除", "移除"),
    "Remove Bones": ("ボーンを外す", "移除骨骼"),
    "Set Mode": ("モードを設定", "设置模式"),
    "Size": ("サイズ", "尺寸"),
    "Your Presets": ("保存したプリセット", "我的预设"),
})

MESSAGES.update({
    "Fit Colliders to Bones": ("ボーンにコライダーを合わせる", "为骨骼拟合碰撞体"),
    "Fit capsule colliders to the selected bones from the body mesh they deform": (
        "選択したボーンに、それらが変形させる体のメッシュからカプセルコライダーを合わせます",
        "根据所选骨骼变形的身体网格为其拟合胶囊碰撞体"),
    "Fit to Bones": ("ボーンに合わせる", "拟合到骨骼"),
    "Fix Waft Warning": ("Waft の警告を修正", "修复 Waft 警告"),
    "Fix what the warning says (undo gives the setup back)": (
        "警告の内容を修正します(元に戻すでセットアップが戻ります)",
        "修复警告所指的问题(撤销可恢复设置)"),
})

# Operator, panel and menu titles
MESSAGES.update({
    "Add Chain and Hair Preset": ("チェーン・髪プリセットを追加", "添加骨链和头发预设"),
    "Add Cloth Setup": ("クロスセットアップを追加", "添加布料设置"),
    "Add Fabric Preset": ("生地プリセットを追加", "添加面料预设"),
    "Add Ragdoll Preset": ("ラグドールプリセットを追加", "添加布娃娃预设"),
    "Add Render Strands": ("レンダーストランドを追加", "添加渲染发丝"),
    "Add Waft Collider": ("Waft コライダーを追加", "添加 Waft 碰撞体"),
    "Apply Fabric": ("生地を適用", "应用面料"),
    "Apply Waft Preset": ("Waft プリセットを適用", "应用 Waft 预设"),
    "Apply Waft Ragdoll Preset": ("Waft ラグドールプリセットを適用", "应用 Waft 布娃娃预设"),
    "Assign Waft Bones": ("Waft ボーンを割り当て", "分配 Waft 骨骼"),
    "Assign Waft Rods": ("Waft ロッドを割り当て", "分配 Waft 杆"),
    "Bake Cloth with Cage Mesh": ("ケージメッシュ付きでクロスをベイク", "烘焙布料并输出笼网格"),
    "Bake Waft": ("Waft をベイク", "烘焙 Waft"),
    "Bone Chains": ("ボーンチェーン", "骨链"),
    "Bones": ("ボーン", "骨骼"),
    "Capture Settled Pose": ("落ち着いたポーズをキャプチャ", "捕捉静置姿态"),
    "Chain and Hair Presets": ("チェーン・髪プリセット", "骨链和头发预设"),
    "Clear Waft Bake": ("Waft のベイクを消去", "清除 Waft 烘焙"),
    "Constraints": ("コンストレイント", "约束"),
    "Create Waft Ragdoll": ("Waft ラグドールを作成", "创建 Waft 布娃娃"),
    "Cuts and Layers": ("カットとレイヤー", "剪切与层"),
    "Edges and Contact": ("縁と接触", "边缘与接触"),
    "Edit Original Action": ("元のアクションを編集", "编辑原始动作"),
    "Export Alembic": ("Alembic を書き出し", "导出 Alembic"),
    "Fabric Presets": ("生地プリセット", "面料预设"),
    "Ground, Colliders, Quality": ("地面・コライダー・品質", "地面、碰撞体、质量"),
    "Guide Physics": ("ガイドの物理", "引导线物理"),
    "Hair Shape and Friction": ("髪の形状と摩擦", "头发形状与摩擦"),
    "Hair Strands": ("髪のストランド", "头发发丝"),
    "Max Distance and Backstop": ("最大距離とバックストップ", "最大距离与背挡"),
    "Ragdoll": ("ラグドール", "布娃娃"),
    "Ragdoll Presets": ("ラグドールプリセット", "布娃娃预设"),
    "Set Waft Ragdoll Mode": ("Waft ラグドールのモードを設定", "设置 Waft 布娃娃模式"),
    "Stiffness": ("剛性", "刚度"),
    "Waft": ("Waft", "Waft"),
    "Waft Bake": ("Waft ベイク", "Waft 烘焙"),
    "Waft Hair Strands": ("Waft 髪ストランド", "Waft 头发发丝"),
    "Waft Ragdoll Body": ("Waft ラグドールボディ", "Waft 布娃娃刚体"),
    "Wind and Drag": ("風と空気抵抗", "风与空气阻力"),
})


# VRM Spring Bone solver and VRM spring-bone import.
MESSAGES.update({
    "Center": ("中心", "中心"),
    "Drag Force": ("空気抵抗 (Drag Force)", "阻力 (Drag Force)"),
    "Gravity Direction": ("重力の方向", "重力方向"),
    "Gravity Power": ("重力の強さ (Gravity Power)", "重力强度 (Gravity Power)"),
    "Hit Radius": ("当たり判定の半径", "碰撞半径"),
    "How the chains are simulated": ("チェーンのシミュレーション方法", "链条的模拟方式"),
    "Solver": ("ソルバー", "求解器"),
    "Stiffness Force": ("剛性 (Stiffness Force)", "刚度 (Stiffness Force)"),
    "The VRM 1.0 spring-bone algorithm, so the bake moves as the character will in VRM "
    "runtimes (UniVRM, three-vrm). Like them it steps once per frame, so its motion changes "
    "with the frame rate": (
        "VRM 1.0 のスプリングボーンのアルゴリズム。ベイクは VRM ランタイム (UniVRM、three-vrm) "
        "での動きと同じになります。それらと同じく 1 フレームに 1 回計算するため、動きはフレーム"
        "レートで変わります",
        "VRM 1.0 弹簧骨骼算法，烘焙结果与角色在 VRM 运行时 (UniVRM、three-vrm) 中的运动一致。"
        "与它们一样每帧计算一次，因此运动随帧率而变"),
    "VRM Spring Bone": ("VRM スプリングボーン", "VRM 弹簧骨骼"),
    "VRM Spring Bone: each frame the tail moves this far times the frame time along the "
    "gravity direction (metres per second; 0 = no gravity)": (
        "VRM スプリングボーン: 毎フレーム、先端が重力の方向へこの値 × フレーム時間だけ動きます"
        " (メートル毎秒、0 = 重力なし)",
        "VRM 弹簧骨骼：每帧末端沿重力方向移动该值 × 帧时间 (米每秒；0 = 无重力)"),
    "VRM Spring Bone: fraction of the tail's motion lost every frame (0 = keeps swinging, "
    "1 = no inertia)": (
        "VRM スプリングボーン: 先端の動きが毎フレーム失われる割合 (0 = 揺れ続ける、1 = 慣性なし)",
        "VRM 弹簧骨骼：末端运动每帧损失的比例 (0 = 持续摆动，1 = 无惯性)"),
    "VRM Spring Bone: pull back toward the rest direction; each frame the tail moves this far "
    "times the frame time (metres per second)": (
        "VRM スプリングボーン: 元の向きへ戻る力。毎フレーム、先端がこの値 × フレーム時間だけ"
        "動きます (メートル毎秒)",
        "VRM 弹簧骨骼：向静止方向回拉；每帧末端移动该值 × 帧时间 (米每秒)"),
    "VRM Spring Bone: world direction of the gravity (normalised when baking)": (
        "VRM スプリングボーン: ワールド空間での重力の方向 (ベイク時に正規化)",
        "VRM 弹簧骨骼：世界空间中的重力方向 (烘焙时归一化)"),
    "Chain Colliders": ("チェーンのコライダー", "链条碰撞体"),
    "Import VRM Spring Bones": ("VRM スプリングボーンを読み込み", "导入 VRM 弹簧骨骼"),
    "Make this armature's chains and colliders from the VRM spring bones of its .vrm file": (
        "このアーマチュアのチェーンとコライダーを、その .vrm ファイルの VRM スプリングボーンから"
        "作成します",
        "根据此骨架的 .vrm 文件中的 VRM 弹簧骨骼创建其链条和碰撞体"),
    "On a chain's first bone: only the Waft colliders in this collection touch this chain (an "
    "empty collection: none). Unset: the setup's colliders": (
        "チェーンの最初のボーンに設定: このコレクション内の Waft コライダーだけがこのチェーンに"
        "当たります (空のコレクション: なし)。未設定: セットアップのコライダー",
        "设在链条的第一根骨骼上：只有此集合中的 Waft 碰撞体作用于此链条 (空集合：无)。"
        "未设置：使用设置的碰撞体"),
    "Waft's own solver: XPBD with fixed substeps; the same motion at every frame rate": (
        "Waft 独自のソルバー: 固定サブステップの XPBD。どのフレームレートでも同じ動き",
        "Waft 自有求解器：固定子步的 XPBD；任何帧率下运动相同"),
})


# Loop-clean bakes.
MESSAGES.update({
    "Bake bone chains and cloth-bones as a clean loop: the baked range must be one cycle of a cyclic animation "
    "(Cycles modifiers, NLA repeats). Earlier cycles are simulated first so the motion settles "
    "into the cycle, and the clip's end is blended into the cycle before it so the last frame "
    "flows into the first": (
        "ボーンチェーンとクロスボーンをきれいなループとしてベイクします。ベイク範囲は周期アニメーション"
        " (Cycles モディファイアー、NLA の繰り返し) のちょうど 1 周期である必要があります。"
        "先に前の周期をシミュレーションして動きを周期に落ち着かせ、クリップの終わりを前の周期へ"
        "ブレンドして、最後のフレームが最初のフレームへつながるようにします",
        "将骨骼链和布料骨骼烘焙为无缝循环：烘焙范围必须正好是循环动画 (Cycles 修改器、NLA 重复) 的一个"
        "周期。先模拟之前的周期使运动进入周期，再把片段末尾混合到前一个周期，使最后一帧衔接"
        "第一帧"),
    "Loop": ("ループ", "循环"),
    "Loop Cycles": ("ループの周期数", "循环周期数"),
    "Whole cycles simulated before the baked one when Loop is on (more settle slow, lightly "
    "damped motion better)": (
        "ループがオンのとき、ベイクする周期の前にシミュレーションする周期の数 (多いほど、ゆっくりで"
        "減衰の弱い動きがよく落ち着きます)",
        "开启循环时，在烘焙周期之前模拟的完整周期数 (越多，缓慢、阻尼小的运动越能稳定)"),
})


# Key reduction.
MESSAGES.update({
    "Key Error Angle": ("キーの許容誤差 (角度)", "关键帧误差 (角度)"),
    "Key Error Distance": ("キーの許容誤差 (距離)", "关键帧误差 (距离)"),
    "Reduce Keys": ("キーを削減", "精简关键帧"),
    "Reduce Keys: the most any bone may turn from the baked motion": (
        "キーを削減: ベイクした動きから各ボーンが回転してよい最大の角度",
        "精简关键帧：每根骨骼相对烘焙运动允许的最大转角"),
    "Reduce Keys: the most any bone tail may move from the baked motion": (
        "キーを削減: ベイクした動きから各ボーンの先端が動いてよい最大の距離",
        "精简关键帧：每个骨骼末端相对烘焙运动允许的最大位移"),
    "Write bone chains' rotations with fewer keys: only where interpolating between keys would "
    "move a bone tail more than Key Error Distance or turn a bone more than Key Error Angle "
    "(off: a key on every frame)": (
        "ボーンチェーンの回転を少ないキーで書き出します。キー間の補間でボーンの先端が「キーの許容"
        "誤差 (距離)」より動くか、ボーンが「キーの許容誤差 (角度)」より回転する所だけにキーを"
        "打ちます (オフ: 毎フレームにキー)",
        "用更少的关键帧写出骨骼链的旋转：只在关键帧之间的插值会使骨骼末端移动超过“关键帧误差 "
        "(距离)”或骨骼转动超过“关键帧误差 (角度)”的地方插入关键帧 (关闭：每帧一个关键帧)"),
})


# Bake targets and the glTF export.
MESSAGES.update({
    "Bake Target": ("ベイク先", "烘焙目标"),
    "Where a bake's keys go": ("ベイクしたキーの書き込み先", "烘焙关键帧写入的位置"),
    "NLA Track": ("NLA トラック", "NLA 轨道"),
    "NLA Track + Merged Copy": ("NLA トラック + 統合コピー", "NLA 轨道 + 合并副本"),
    "The result plays from Waft's own NLA track above your animation, which is not changed "
    "(Clear Bake removes it)": (
        "結果はアニメーションの上にある Waft 専用の NLA トラックから再生されます。あなたの"
        "アニメーションは変更されません (ベイクをクリアで削除)",
        "结果从动画上方的 Waft 专用 NLA 轨道播放，你的动画不会被修改 (清除烘焙会将其删除)"),
    "Also make '<action> (Waft)': a copy of your action with the physics keys in it and its "
    "frame range set to the bake, one clip per action for game export (glTF, FBX). Your "
    "action is not changed": (
        "さらに「<アクション> (Waft)」を作ります: 物理のキーを含み、フレーム範囲をベイクに合わせた"
        "アクションのコピーで、ゲーム向け書き出し (glTF、FBX) でアクションごとに 1 クリップに"
        "なります。元のアクションは変更されません",
        "同时创建“<动作> (Waft)”：包含物理关键帧、帧范围设为烘焙范围的动作副本，游戏导出 (glTF、"
        "FBX) 时每个动作一个片段。你的动作不会被修改"),
    "Export glTF with Physics": ("物理込みで glTF を書き出し", "导出含物理的 glTF"),
    "Export the baked armatures to glTF with one clip per action, the physics merged in": (
        "ベイクしたアーマチュアを glTF に書き出します。アクションごとに 1 クリップで、物理が"
        "統合されています",
        "将烘焙过的骨架导出为 glTF，每个动作一个片段，并合并物理"),
})


# VRM spring bones out (glTF export).
MESSAGES.update({
    "VRM Spring Bones": ("VRM スプリングボーン", "VRM 弹簧骨骼"),
    "Waft's option in the glTF export dialog": (
        "glTF 書き出しダイアログの Waft のオプション", "glTF 导出对话框中的 Waft 选项"),
    "glTF export: write the exported armatures' Waft bone chains and their colliders as VRM "
    "spring bones (VRMC_springBone), for VRM runtimes and engines that read them; other "
    "programs ignore the data": (
        "glTF 書き出し: 書き出すアーマチュアの Waft ボーンチェーンとそのコライダーを VRM スプリング"
        "ボーン (VRMC_springBone) として書き込みます。VRM ランタイムや対応エンジン用で、他の"
        "プログラムはこのデータを無視します",
        "glTF 导出：将导出骨架的 Waft 骨骼链及其碰撞体写为 VRM 弹簧骨骼 (VRMC_springBone)，供 VRM "
        "运行时和支持它的引擎使用；其他程序会忽略这些数据"),
})


# Bake Target: Slot in Your Action (Blender 4.4+).
MESSAGES.update({
    "Slot in Your Action": ("あなたのアクションのスロット", "你的动作中的槽位"),
    "The result goes into a new slot of your own action (your keys are not changed), played by "
    "Waft's NLA track: the physics travels with the action when you append it or put it in an "
    "asset library (Clear Bake removes the slot)": (
        "結果はあなたのアクションの新しいスロットに入り (あなたのキーは変更されません)、Waft の"
        " NLA トラックで再生されます。アクションをアペンドしたりアセットライブラリに入れたりしても"
        "物理が一緒に移ります (ベイクをクリアでスロットを削除)",
        "结果写入你自己动作的一个新槽位 (你的关键帧不会被修改)，由 Waft 的 NLA 轨道播放：追加该动作"
        "或放入资产库时物理随之一起 (清除烘焙会删除该槽位)"),
})


# Reduce Keys on an existing result.
MESSAGES.update({
    "Reduce Keys of Result": ("結果のキーを削減", "精简结果的关键帧"),
    "Thin out the keys of the baked bone chains within Key Error Distance and Key Error Angle": (
        "ベイク済みボーンチェーンのキーを「キーの許容誤差 (距離)」と「キーの許容誤差 (角度)」の"
        "範囲で間引きます",
        "在“关键帧误差 (距离)”和“关键帧误差 (角度)”范围内精简已烘焙骨骼链的关键帧"),
})


# Render-strand bake storage: the guides (rebuilt by geometry nodes) or every point.
MESSAGES.update({
    "Storage": ("保存方式", "存储方式"),
    "What the render-strand bake stores in the .blend": (
        "レンダー毛束のベイクが .blend に保存する内容",
        "渲染发丝烘焙在 .blend 中存储的内容"),
    "Guides (Small File)": ("ガイド (小さいファイル)", "引导线 (小文件)"),
    "Store the guides, scalp matrix and colliders per frame; geometry nodes rebuild the "
    "strands at playback (plays and renders without Waft; within a micrometre of Every Point)": (
        "フレームごとにガイド・頭皮の行列・コライダーを保存し、再生時にジオメトリノードが毛束を"
        "再構築します (Waft なしで再生・レンダリング可能。「全ポイント」との差は 1 マイクロメートル"
        "以内)",
        "每帧存储引导线、头皮矩阵和碰撞体，播放时由几何节点重建发丝 (无需 Waft 即可播放和渲染；"
        "与“全部点”相差不到 1 微米)"),
    "Every Point": ("全ポイント", "全部点"),
    "Collide with Body Meshes": ("ボディメッシュと衝突", "与身体网格碰撞"),
    "Push the render strands out of the body-mesh colliders too, after the shapes (slower: "
    "every strand point near a body tests the triangles near it; the guides collide with the "
    "meshes either way)": (
        "形状コライダーの後、ボディメッシュのコライダーからもレンダー毛束を押し出します (低速: "
        "ボディ付近の毛束の各ポイントが近くの三角形を調べます。ガイドはどちらの場合もメッシュと"
        "衝突します)",
        "在形状碰撞体之后，也把渲染发丝推出身体网格碰撞体 (较慢：身体附近发丝的每个点都要检测附近的"
        "三角形；引导线无论如何都会与网格碰撞)"),
    "Store every point of every strand on every frame (exactly the preview's strands; files "
    "grow with strands × points × frames)": (
        "全フレームの全毛束の全ポイントを保存します (プレビューの毛束と完全に一致。ファイルサイズは"
        "毛束数 × ポイント数 × フレーム数に比例)",
        "存储每一帧每根发丝的每个点 (与预览的发丝完全一致；文件大小随发丝数 × 点数 × 帧数增长)"),
})


# Operator options (their redo panels): tools/ui_strings.py reads an operator's own
# properties from bpy.ops (the class's RNA has none, so these were never listed).
MESSAGES.update({
    "A bone on every n-th column (Alan Wake: 2)": (
        "n 列ごとにボーンを 1 本 (Alan Wake: 2)",
        "每 n 列一根骨骼 (Alan Wake: 2)"),
    "A bone on every n-th row (Alan Wake: 1)": (
        "n 行ごとにボーンを 1 本 (Alan Wake: 1)",
        "每 n 行一根骨骼 (Alan Wake: 1)"),
    "Action": ("操作", "操作"),
    "Active": ("アクティブ", "活动项"),
    "Add": ("追加", "添加"),
    "All Setups": ("すべてのセットアップ", "所有设置"),
    "Apply to the selected bodies only (the armature settings still change)": (
        "選択したボディにのみ適用 (アーマチュアの設定は変わります)",
        "仅应用于选中的身体 (骨架设置仍会更改)"),
    "Bone Collection": ("ボーンコレクション", "骨骼集合"),
    "Bones not chosen stop being bodies": (
        "選ばれなかったボーンはボディでなくなります",
        "未选中的骨骼不再是身体"),
    "Capsule radius at both ends": ("両端のカプセル半径", "两端的胶囊体半径"),
    "Column Step": ("列の間隔", "列间隔"),
    "Create on Grid": ("グリッド上に作成", "在网格上创建"),
    "Current Animation": ("現在のアニメーション", "当前动画"),
    "Each selected bone whose parent is not selected starts a rod": (
        "親が選択されていない選択ボーンがそれぞれロッドの始点になります",
        "父级未选中的每根选中骨骼都作为一根杆的起点"),
    "Every Waft setup in the scene": (
        "シーン内のすべての Waft セットアップ",
        "场景中的所有 Waft 设置"),
    "Every bone of a bone collection (a rig's deform layer, whatever its bones are called); "
    "humanoid names still get humanoid capsules and limits": (
        "ボーンコレクションのすべてのボーン (ボーン名に関係なくリグの変形レイヤー)。人体の名前"
        "のボーンには人体のカプセルと制限が付きます",
        "骨骼集合中的所有骨骼 (绑定的变形层，无论骨骼如何命名)；人体名称的骨骼仍获得人体胶囊体"
        "和限制"),
    "Every bone with a humanoid name (hips, spine, chest, neck, head, shoulders, arms, hands, "
    "legs, feet); the deforming ones when there are (a Rigify rig's DEF bones)": (
        "人体の名前を持つすべてのボーン (腰、背骨、胸、首、頭、肩、腕、手、脚、足)。変形ボーン"
        "があればそれら (Rigify リグの DEF ボーン)",
        "所有具有人体名称的骨骼 (髋、脊柱、胸、颈、头、肩、手臂、手、腿、脚)；有变形骨骼时只取"
        "变形骨骼 (Rigify 绑定的 DEF 骨骼)"),
    "File Path": ("ファイルパス", "文件路径"),
    "Fit Limits To": ("制限を合わせる対象", "限制适配对象"),
    "Fit Limits to Animation": ("制限をアニメーションに合わせる", "使限制适配动画"),
    "Fit Radius to Ground": ("半径を地面に合わせる", "使半径适配地面"),
    "Fix": ("修正", "修复"),
    "Format": ("形式", "格式"),
    "Give each ragdoll body inside the ground at this frame the radius that just touches it": (
        "このフレームで地面に入り込んでいる各ラグドールボディの半径を、地面にちょうど接する大きさ"
        "にします",
        "将此帧中陷入地面的每个布娃娃身体的半径设为恰好接触地面的大小"),
    "Humanoid": ("人体", "人体"),
    "JSON, binary buffers and textures apart": (
        "JSON、バイナリバッファ、テクスチャを別々に",
        "JSON、二进制缓冲区和纹理分开存放"),
    "Keep the humanoid table's limits; an animation that goes past them is pushed back inside "
    "by the bake": (
        "人体の表の制限をそのまま使います。制限を超えるアニメーションはベイクで内側に押し戻されま"
        "す",
        "保留人体表中的限制；超出限制的动画会在烘焙时被推回限制之内"),
    "Key the overriding constraints' influence to 0 in Waft's result": (
        "上書きするコンストレイントの影響を Waft の結果で 0 にキーします",
        "在 Waft 的结果中将覆盖性约束的影响键为 0"),
    "Map Nearest": ("最も近い頂点に対応付け", "映射到最近顶点"),
    "Map existing bones to the vertex nearest their head": (
        "既存のボーンをヘッドに最も近い頂点に対応付けます",
        "将现有骨骼映射到离其头部最近的顶点"),
    "Measure World Motion in the space of the bone that carries the character": (
        "キャラクターを運ぶボーンの空間でワールド移動を測ります",
        "在带动角色的骨骼空间中测量世界运动"),
    "New bones along the cage's columns (every Row Step-th row but the last, every Column "
    "Step-th column), parented to Parent Bone": (
        "ケージの列に沿った新しいボーン (最後を除く「行の間隔」ごとの行、「列の間隔」ごとの列)"
        "。親ボーンの子になります",
        "沿笼网格各列的新骨骼 (除最后一行外每隔“行间隔”行、每隔“列间隔”列)，父级为“父骨骼"
        "”"),
    "None (Table Limits)": ("なし (表の制限)", "无 (表中限制)"),
    "One file with everything in it": ("すべてを含む 1 つのファイル", "包含全部内容的单个文件"),
    "Only Selected": ("選択のみ", "仅选中项"),
    "Only the setups of the active object (armature, cage or guide curves)": (
        "アクティブオブジェクト (アーマチュア、ケージ、ガイドカーブ) のセットアップのみ",
        "仅活动物体 (骨架、笼网格或引导曲线) 的设置"),
    "Parent Bone": ("親ボーン", "父骨骼"),
    "Parent of the created bones (empty: the bone the pinned vertices are weighted to most)": (
        "作成するボーンの親 (空欄: 固定頂点のウェイトが最も大きいボーン)",
        "所创建骨骼的父级 (留空: 固定顶点权重最大的骨骼)"),
    "Prefix": ("接頭辞", "前缀"),
    "Remove the rods that start at a selected bone": (
        "選択したボーンから始まるロッドを削除します",
        "移除从选中骨骼开始的杆"),
    "Replace": ("置き換え", "替换"),
    "Rig's Actions": ("リグのアクション", "绑定的动作"),
    "Row Step": ("行の間隔", "行间隔"),
    "Scope": ("範囲", "范围"),
    "Selected": ("選択", "选中项"),
    "Shrink Collider": ("コライダーを縮小", "缩小碰撞体"),
    "Shrink the collider about its origin (a plane: move it back) until the chain or the cage "
    "is clear of it": (
        "チェーンやケージが離れるまで、コライダーを原点を中心に縮小します (平面の場合は後ろに下"
        "げます)",
        "以原点为中心缩小碰撞体 (平面则向后移动)，直到骨链或笼网格不再与其重叠"),
    "Simulate the selected bones": ("選択したボーンをシミュレーションします", "模拟选中的骨骼"),
    "Sphere radius, box half-extent, capsule half-length (its segment along local Z) or the "
    "drawn half-width of a plane": (
        "球の半径、ボックスの半分の大きさ、カプセルの半分の長さ (ローカル Z 方向の線分)、ま"
        "たは平面の表示上の半幅",
        "球体半径、盒体半边长、胶囊体半长 (沿局部 Z 的线段) 或平面绘制的半宽"),
    "Stop simulating the selected bones": (
        "選択したボーンのシミュレーションをやめます",
        "停止模拟选中的骨骼"),
    "Target": ("ターゲット", "目标"),
    "The animations Fit Limits to Animation widens the joint limits to (the choices of Create "
    "Waft Ragdoll)": (
        "「制限をアニメーションに合わせる」が関節の制限を広げる対象のアニメーション (Waft "
        "ラグドールを作成と同じ選択肢)",
        "“使限制适配动画”据以放宽关节限制的动画 (与“创建 Waft 布娃娃”的选项相同)"),
    "Older form of Fit Limits To: off keeps the humanoid table's limits": (
        "「制限を合わせる対象」の旧形式: オフにするとヒューマノイド表の制限のままにします",
        "“限制适配对象”的旧形式：关闭时保留人形表中的限制"),
    "The animations each joint's limits are widened to, so the character's own animation never "
    "meets a limit": (
        "各関節の制限を広げて合わせるアニメーション。キャラクター自身のアニメーションが制限に当た"
        "らないようにします",
        "放宽各关节限制所依据的动画，使角色自己的动画永远不会碰到限制"),
    "The armature, or the cloth cage": ("アーマチュア、またはクロスのケージ", "骨架或布料笼网格"),
    "The bone collection whose bones become bodies": (
        "ボーンがボディになるボーンコレクション",
        "其骨骼成为身体的骨骼集合"),
    "The selected pose bones": ("選択したポーズボーン", "选中的姿态骨骼"),
    "Use as Space Bone": ("空間ボーンとして使用", "用作空间骨骼"),
    "Vertex group of the pinned vertices (empty: keep the cage's, else 'Pin')": (
        "固定頂点の頂点グループ (空欄: ケージのものを維持、なければ 'Pin')",
        "固定顶点的顶点组 (留空: 保留笼网格的，否则为 'Pin')"),
    "Widen each joint's limits to every animation of the armature, with 10° to spare: the one "
    "playing over the scene's frame range, and each action of its NLA tracks (muted and "
    "stashed ones too) over its own frame range, so switching to another of the character's "
    "animations meets no limit either": (
        "アーマチュアのすべてのアニメーションに合わせて各関節の制限を 10° の余裕を持って広げ"
        "ます: 再生中のものはシーンのフレーム範囲で、NLA トラックの各アクション (ミュート"
        "中・退避済みのものも) はそれぞれのフレーム範囲で。キャラクターの別のアニメーションに切"
        "り替えても制限に当たりません",
        "按骨架的所有动画放宽各关节限制并留 10° 余量: 正在播放的动画取场景帧范围，NLA "
        "轨道上的每个动作 (包括静音和暂存的) 取其自身帧范围；切换到角色的其他动画也不会碰到限"
        "制"),
    "Widen each joint's limits to the animation playing now over the scene's frame range, with "
    "10° to spare": (
        "シーンのフレーム範囲で再生中のアニメーションに合わせて、各関節の制限を 10° の余裕を"
        "持って広げます",
        "按当前在场景帧范围内播放的动画放宽各关节限制，并留 10° 余量"),
    "Widen the ragdoll's joint limits so its animations stay inside them, as Create Waft "
    "Ragdoll does (Fit Limits To)": (
        "Waft ラグドールを作成と同様に (制限を合わせる対象)、アニメーションが収まるようラ"
        "グドールの関節の制限を広げます",
        "像“创建 Waft 布娃娃”一样 (限制适配对象) 放宽布娃娃的关节限制，使其动画保持在"
        "限制之内"),
    "glTF Binary (.glb)": (
        "glTF バイナリ (.glb)",
        "glTF 二进制 (.glb)"),
    "glTF Separate (.gltf + .bin)": (
        "glTF 分割 (.gltf + .bin)",
        "glTF 分离 (.gltf + .bin)"),
})
