//! Hand-written vocabularies for synthetic post text. Each list is whitespace separated and
//! roughly ordered from frequent to rare (sampling favours the front of each list).

pub const EN: &str = "the I to a and you it of is that in my this for be on so not just me have it's i'm \
with are but like was all your do what can we if at he they about get know one no don't out \
people up this will love really good think time now how she would more when an or from make day \
there who by going because today want see her need still as his them go new much even back \
also been right got why our some us has here want then say thank thanks yes only way year feel \
these well lot great them than too first never had did very life sure please post being world \
work last same things thing something any best happy better other many could into where read \
always let nice always actually also again after most those look over before little game long \
oh yeah lol lmao omg tbh ngl imo btw fr wow haha okay ok hey hello everyone morning night week \
weekend friday today's tonight tomorrow yesterday home house family friends friend kids dog cat \
cats dogs coffee food dinner lunch breakfast music song album book books movie film show series \
episode season art drawing painting photo photos picture sketch commission open thread bluesky \
twitter here site app account follow followers feed post posts reply replies repost share link \
news story article politics election president vote trump biden harris america american country \
government state law court judge police war peace climate change science research data study \
team play played playing win won lose lost fan fans football soccer basketball baseball hockey \
race car city town street water rain snow cold hot weather sun moon sky stars tree trees flower \
garden beautiful cute lovely amazing awesome perfect terrible awful weird funny crazy sad angry \
tired sick busy free ready sorry hope wish miss missed glad proud excited scared worried fine \
true false real fake wrong hard easy fast slow big small old young whole full half every each \
money pay paid job jobs company business market price cost buy sold sale store shop online \
computer phone internet software code video videos stream streaming live watch watching watched \
listen listening heard hear said says saying told tell talk talking call called mean means meant \
understand remember forget forgot learn learned try trying tried start started stop stopped \
finally already almost enough probably maybe definitely literally honestly seriously absolutely \
definitely anyway though although while since until during between through without within \
against another someone everyone anyone nobody nothing everything anything somewhere everywhere \
school class teacher student students university college health doctor hospital care body mind \
heart brain eyes face hands head hair voice words word name names idea ideas question answer \
problem problems reason point fact facts part place places end beginning middle side top bottom \
support help helped helping working worked works build built building make made making take took \
taking give gave giving find found finding keep kept leave left bring brought run ran walk walked \
sleep slept eat ate drink drank wait waited hold held turn turned move moved open closed close \
birthday christmas holiday holidays thanksgiving halloween november december january summer winter \
spring fall autumn morning evening afternoon hour hours minutes days weeks months years ago soon \
later early late next previous recent recently current currently usually often sometimes rarely \
delicious cozy chaotic vibes mood energy moment moments memories dream dreams goal goals plan plans \
project projects update finished working-on progress piece pieces character characters fanart oc \
sketchbook wip commission-open prints sticker stickers shop etsy patreon kofi";

pub const EN_CAPS: &str = "Bluesky Twitter Musk Elon Trump Biden Harris Obama Congress Senate \
America Canada Texas California Florida London Paris Berlin Tokyo Brazil Ukraine Russia China \
Gaza Israel Europe Germany France Japan Australia Mexico Netflix YouTube Google Apple Microsoft \
Amazon Spotify Steam Nintendo Sony Xbox Marvel Disney Pixar Taylor Swift Beyonce NFL NBA MLB NHL \
Monday Tuesday Wednesday Thursday Friday Saturday Sunday Thanksgiving Christmas November December \
Jesus God Linux Windows Python Rust Android iPhone Mastodon Threads Reddit Tumblr Discord Twitch";

pub const JA: &str = "の は に を が て た で と も し です ます ない な ね よ か から けど って \
今日 今日も 明日 昨日 本当に すごい かわいい 可愛い 好き 大好き ありがとう ありがとうございます \
おはよう おはようございます おやすみ お疲れ様です よろしく よろしくお願いします 嬉しい 楽しい \
悲しい 眠い 疲れた 寒い 暑い 雨 天気 朝 夜 時間 仕事 会社 学校 電車 友達 家族 子供 猫 犬 花 \
空 海 山 音楽 歌 ライブ イベント 告知 更新 完成 作品 練習 絵 漫画 アニメ ゲーム 配信 動画 写真 \
新しい 一日 頑張る 頑張ろう 寝る 食べた 買った 見た 行った 来た 描いた 作った 思う 思った \
これ それ あれ なんか やっぱり とても かなり 全然 また もう まだ いつも 初めて 久しぶり \
最高 感謝 フォロー いいね ブルスコ ブルースカイ 日本 東京 大阪 京都 ご飯 お昼 晩ご飯 ラーメン \
コーヒー お茶 ケーキ 誕生日 おめでとう 皆さん みんな 自分 私 僕 俺 あなた 彼 彼女 先生 \
本 映画 ドラマ 原稿 締め切り 落書き 模写 練習中 進捗 らくがき 推し 尊い 草 笑 w ｗｗｗ";

pub const KO: &str = "오늘 정말 너무 진짜 감사합니다 안녕하세요 사랑해 좋아요 우리 저는 그리고 \
하지만 그래서 이거 그냥 다시 같이 지금 내일 어제 시간 사람 생각 친구 노래 영상 사진 고양이 \
강아지 날씨 행복 하루 많이 조금 먹었어요 봤어요 했어요 있어요 없어요 합니다 입니다 ㅋㅋㅋ ㅠㅠ \
팬 방송 콘서트 앨범 축하해 화이팅 최고 예쁘다 귀여워 배고파 졸려 일 회사 학교 집 주말 월요일 \
커피 음식 여행 한국 서울 블루스카이 트위터 팔로우 게임 그림 만화 드라마 영화 음악 공연 \
좋은 아침 잘자 수고했어 괜찮아 보고싶다 재밌다 힘들다 대박 완전 역시 그래도 아직 벌써";

pub const ZH: &str = "的 了 是 我 你 他 她 们 在 有 不 这 那 就 也 都 和 很 说 要 去 会 好 \
今天 明天 昨天 现在 时间 工作 朋友 喜欢 真的 可以 没有 什么 怎么 为什么 因为 所以 但是 \
谢谢 大家 中国 台湾 香港 北京 上海 新闻 天气 电影 音乐 游戏 照片 猫 狗 吃饭 睡觉 开心 \
哈哈 哈哈哈 加油 晚安 早安 蓝天 推特 关注 一起 已经 还是 觉得 知道 看到 听到 希望";

pub const PT: &str = "de que e o a não é do da em um para com uma os no se na por mais as dos \
como mas foi ao ele das tem à seu sua ou ser quando muito há nos já está eu também só pelo \
pela até isso ela entre era depois sem mesmo aos ter seus quem nas me esse eles estão você \
tinha foram essa num nem suas meu às minha têm numa pelos elas havia seja qual será nós tenho \
lhe deles essas esses pelas este fosse dele tu te vocês vos lhes meus minhas teu tua nossa \
gente hoje amanhã ontem agora sempre nunca ainda bom boa dia noite obrigado obrigada demais \
kkkk kkkkk né tá pra pro vai vou tô aqui ali lá coisa coisas vida mundo amor casa trabalho \
brasil governo lula bolsonaro povo país cidade rua tempo chuva calor frio jogo time futebol \
flamengo corinthians palmeiras música filme série livro arte foto desenho bluesky twitter";

pub const ES: &str = "de la que el en y a los se del las un por con no una su para es al lo \
como más pero sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay \
donde quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto mí \
antes algunos qué unos yo otro otras otra él tanto esa estos mucho quienes nada muchos cual \
poco ella estar estas algunas algo nosotros mi mis tú te ti tu tus ellas vosotros os mío \
hoy mañana ayer ahora siempre nunca todavía bueno buena día noche gracias jajaja jaja pues \
vida mundo amor casa trabajo gente país gobierno ciudad calle tiempo lluvia calor frío \
partido fútbol equipo música película serie libro arte foto dibujo españa méxico argentina";

pub const DE: &str = "der die und in den von zu das mit sich des auf für ist im dem nicht ein \
eine als auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem \
über einen so zum war haben nur oder aber vor zur bis mehr durch man sein wurde sei hier \
heute morgen gestern jetzt immer nie schon noch gut guten tag nacht danke bitte ja nein \
leben welt liebe haus arbeit leute land regierung stadt straße zeit regen kalt warm wetter \
spiel mannschaft fußball musik film serie buch kunst foto zeichnung deutschland berlin \
einfach wirklich eigentlich vielleicht genau natürlich trotzdem endlich leider wieder ganz";

pub const FR: &str = "de la le et les des en un du une que est pour qui dans a par plus pas au \
sur ne se ce il sont avec ou son sa ses mais comme on tout nous elle je tu vous ils elles \
aujourd'hui demain hier maintenant toujours jamais encore bon bonne jour nuit merci oui non \
vie monde amour maison travail gens pays gouvernement ville rue temps pluie chaud froid \
match équipe musique film série livre art photo dessin france paris vraiment trop très bien";

pub const IT: &str = "di che e il la a per un in è non una sono mi con si ma ho lo ti del le \
oggi domani ieri adesso sempre mai ancora buongiorno buonanotte grazie sì vita mondo amore \
casa lavoro gente paese governo città strada tempo pioggia caldo freddo partita squadra \
musica film serie libro arte foto disegno italia roma milano davvero molto bene proprio";

pub const NL: &str = "de het een en van in is dat op te zijn met voor niet er aan ook als dan \
maar bij nog wel om uit of door naar heb kan wat zo al jij ik we ze hij vandaag morgen \
gisteren nu altijd nooit goed dag nacht bedankt leven wereld liefde huis werk mensen land \
regering stad tijd regen koud warm wedstrijd muziek film boek kunst foto nederland gewoon";

pub const RU: &str = "и в не на я что он с как а то это все она так его но вы ты по к у же \
мы из за бы от мне было вот меня еще нет о уже когда сегодня завтра вчера сейчас всегда \
никогда хорошо день ночь спасибо да жизнь мир любовь дом работа люди страна город время \
дождь холодно тепло игра музыка фильм книга фото россия украина москва очень просто";

pub const UK: &str = "і в не на я що він з як а то це все вона так його але ви ти по до у вже \
ми із за би від мені було ось мене ще немає коли сьогодні завтра вчора зараз завжди добре \
день ніч дякую так життя світ любов дім робота люди країна місто час україна київ слава";

pub const TR: &str = "ve bir bu da de için ne ile çok ben sen o biz siz onlar gibi daha ama \
var yok olan olarak kadar sonra şimdi bugün yarın dün her zaman hiç iyi gün gece teşekkürler \
evet hayır hayat dünya aşk ev iş insanlar ülke şehir zaman yağmur soğuk sıcak maç müzik \
film kitap sanat fotoğraf türkiye istanbul ankara gerçekten sadece bence galiba";

pub const PL: &str = "i w nie na się z że to jest do co jak a o ale tak jestem po za od już \
tylko mnie mi czy dzisiaj jutro wczoraj teraz zawsze nigdy dobrze dzień noc dziękuję tak \
życie świat miłość dom praca ludzie kraj miasto czas deszcz zimno ciepło mecz muzyka film \
książka sztuka zdjęcie polska warszawa naprawdę bardzo trochę";

pub const ID: &str = "yang dan di ini itu dengan untuk tidak dari dalam akan pada juga saya \
kamu dia kita mereka ada bisa sudah belum hari ini besok kemarin sekarang selalu baik malam \
terima kasih ya hidup dunia cinta rumah kerja orang negara kota waktu hujan panas main musik \
film buku seni foto indonesia jakarta banget aja gak udah";

pub const AR: &str = "في من على أن إلى هذا هذه التي الذي كان مع عن لا ما هو هي نحن أنا أنت \
اليوم غدا أمس الآن دائما جميل شكرا نعم الحياة العالم الحب البيت العمل الناس البلد المدينة \
الوقت المطر الموسيقى فيلم كتاب صورة مصر السعودية غزة فلسطين الله الحمد";

pub const SV: &str = "och i att det som en på är av för med till den har de inte om ett han \
men var jag sig från vi så kan man när år säger hon under också efter eller nu sin där vid \
idag imorgon igår alltid aldrig bra dag natt tack liv världen kärlek hus jobb folk land stad";

/// Emoji, including multi-code-point sequences (ZWJ, skin tones, flags, variation selectors).
pub const EMOJI: &str = "😂 ❤️ 😭 🥺 ✨ 🙏 😍 🔥 💀 👀 😊 🥰 💕 😅 🤔 👍 🙌 💙 🦋 ✅ 🎉 😎 😢 \
😡 🤷‍♂️ 🤷‍♀️ 🫶 💜 🖤 💛 💚 🧡 😆 😁 😘 🤗 🙃 😏 😴 🤡 👏 👋 💯 ⭐ 🌈 🌸 🍕 ☕ 🐱 🐶 \
🏳️‍🌈 🇺🇸 🇧🇷 🇯🇵 🇩🇪 🇺🇦 👉 👇 📢 📸 🎨 🎵 🎮 📚 ⚡️ 🆕 🤍 😳 🥲 🫠 🤦‍♀️ 🤦🏻‍♂️ 👍🏻 🙏🏼 \
💖 😌 🤣 😤 🥳 💪 🌙 🍂 🎄 🐈 🐈‍⬛ 🌊 🌻 🍀 🎶 📺 🗳️ 🚨 ⚠️ ➡️ ❗ ‼️ 💔 😩 😬 🤝 🫡";

pub const TAGS: &str = "art photography bluesky music news politics gaming anime books science \
cats dogs nature AI furry vtuber ArtistsOnBluesky photosky booksky histsky SkyPolitics NFL F1 \
tech linux cooking travel film horror fantasy writing amwriting poetry comics illustration \
digitalart traditionalart fanart originalcharacter OC sketch commission pixelart 3D blender \
gamedev indiedev screenshotsaturday wildlife birds birding garden gardening knitting crochet \
climate election2024 uspol ukpol cdnpol auspol brasil arte desenho イラスト 絵描きさんと繋がりたい \
お絵描き 일러스트 MondayMotivation caturday dogsofbluesky BlackSky TransRights Palestine Ukraine";

pub const FIRST_NAMES: &str = "James Mary John Patricia Robert Jennifer Michael Linda William \
Elizabeth David Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Chris Lisa \
Daniel Nancy Matthew Betty Anthony Sandra Mark Ashley Donald Emily Steven Kimberly Paul Donna \
Andrew Michelle Josh Carol Kevin Amanda Brian Melissa George Deborah Tim Stephanie Ed Rebecca \
Jason Laura Jeff Sharon Ryan Cynthia Jacob Kathleen Gary Amy Nick Shirley Eric Angela Jon \
Helen Stephen Anna Larry Brenda Justin Pamela Scott Nicole Brandon Sam Ben Alex Emma Olivia \
Lucas Gabriel Maria Ana Joao Pedro Luiza Julia Felipe Hans Anna Lukas Lena Pierre Marie \
Camille Hugo Sofia Mateo Valentina Diego Yuki Haruto Sakura Ren Minji Jisoo Seojun Wei Mei \
Ivan Olga Dmitri Mehmet Ayse Kai Luna Robin Quinn Riley Jamie Morgan Avery Sky River Rowan";

pub const LAST_NAMES: &str = "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez \
Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez \
Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott \
Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts \
Silva Santos Oliveira Souza Costa Müller Schmidt Schneider Fischer Dubois Laurent Rossi Russo \
Tanaka Suzuki Sato Kim Park Choi Wang Li Zhang Ivanov Yilmaz Kowalski Jansen Berg";

pub const DOMAINS: &str = "www.youtube.com youtu.be www.nytimes.com www.theguardian.com \
www.washingtonpost.com www.bbc.com www.bbc.co.uk www.cnn.com apnews.com www.reuters.com \
www.npr.org www.politico.com www.theatlantic.com www.vox.com www.rawstory.com www.msn.com \
open.spotify.com music.apple.com www.instagram.com www.tiktok.com x.com twitter.com \
www.twitch.tv github.com en.wikipedia.org www.reddit.com substack.com www.patreon.com \
ko-fi.com www.etsy.com www.amazon.com www.nbcnews.com abcnews.go.com www.cbsnews.com \
www.independent.co.uk www.dw.com www.lemonde.fr g1.globo.com www.folha.uol.com.br \
www3.nhk.or.jp news.yahoo.co.jp www.spiegel.de www.zeit.de elpais.com www.lanacion.com.ar \
www.theverge.com arstechnica.com www.wired.com techcrunch.com www.404media.co \
www.huffpost.com www.usatoday.com www.axios.com thehill.com www.nature.com www.science.org \
arxiv.org store.steampowered.com www.kickstarter.com linktr.ee medium.com";

pub const SECTIONS: &str = "news world us politics business technology science health sports \
arts culture opinion lifestyle environment climate education books music film games \
video watch p article story live entertainment economy travel food";

pub const TLDS: &str = "com net org social dev io xyz art me blue app page online site fr de br jp";

/// Frequent English multi-word phrases (mixed into English text).
pub const EN_PHRASES: &[&str] = &[
    "I don't know", "thank you so much", "this is so", "can't wait", "good morning", "happy birthday", "I love this",
    "what a", "so much", "right now", "at the same time", "in the morning", "let me know", "to be honest", "I think",
    "I can't believe", "this is the", "one of the", "a lot of", "I have no idea", "it's been a", "going to be",
    "I'm so", "we need to", "you have to", "if you're", "for the first time", "all the time", "I just", "I need to",
    "so happy", "the best", "the other day", "last night", "this week", "out of the", "on the other hand", "as well",
    "at least", "by the way", "I hope", "love you", "miss you", "good night", "see you", "thank you", "oh my god",
    "look at this", "check out", "new post", "here's the", "don't forget", "make sure", "the rest of", "the end of",
    "it was", "there is", "there are", "I was", "you are", "they are", "we are", "he was", "she was", "I've been",
    "you'll", "I'd", "it's not", "that's not", "I'm not", "do you", "did you", "have you", "are you", "is it",
    "was it", "can you",
];
