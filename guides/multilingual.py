"""
# Multilingual models: train in English, classify French and German

XLM-RoBERTa (Conneau et al., 2020) is RoBERTa pretrained on text in 100
languages with one shared SentencePiece vocabulary (250,002 pieces). No
sentence in its pretraining was paired with its translation, yet its
layers come to represent similar meanings alike across languages: a
classifier fine-tuned on English labels alone then works, less well but
far above chance, on other languages. This is **zero-shot cross-lingual
transfer**, the setting of the XNLI benchmark.

This guide shows the recipe on a small sentiment task:

1. a parallel set of short review-like sentences, positive or negative,
   in English, French and German (written for this guide);
2. `kzoo.XLMRobertaTextClassifier` fine-tuned on English sentences only;
3. its accuracy on held-out sentences in each of the three languages,
   the held-out English being the in-language reference.

**The data is tiny and illustrative**: 48 sentences per language, written
by hand for this guide (kzoo's bundled text is English only). 32 English
sentences train the classifier; the other 16 topics are held out in all
three languages. One held-out sentence is 6.25 points of accuracy, so
read the numbers as a demonstration of the method, not as a benchmark:
for one, use XNLI or a multilingual review corpus.

    KERAS_BACKEND=jax python guides/multilingual.py   # xlm_roberta_base_multi
    KZOO_GUIDE_SMOKE=1 python guides/multilingual.py  # the test's

The full run loads `xlm_roberta_base_multi` (278M parameters, downloaded
from the Hugging Face hub on first use); `mdeberta_v3_base_multi` with
`kzoo.DebertaV3TextClassifier` is the same recipe. The smoke run (the
test's, offline) trains a tiny random XLM-R with a 300-piece
SentencePiece vocabulary learnt from the guide's sentences: it shows
that every step runs; its accuracies mean nothing, and a random model
cannot transfer anything.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402

SIZES = {
    # fine-tuning runs (one seed each), epochs per run
    "smoke": dict(seeds=(0,), epochs=2),
    "full": dict(seeds=(0, 1, 2), epochs=15),
}["smoke" if SMOKE else "full"]
start = time.time()

"""
## 1. The parallel set

Each row is one sentence in English, French and German. The positive
and negative rows come in pairs on the same topic (a good and a bad
hotel room), so no topic word gives the label away. The first 16 pairs
train, the last 8 pairs are held out: the held-out topics (stories,
children, bread, gardens, trips, software...) are not the training ones.
"""

POSITIVE = [
    ("The food was delicious and the staff were friendly.",
     "La nourriture était délicieuse et le personnel était aimable.",
     "Das Essen war köstlich und das Personal war freundlich."),
    ("I loved this film from start to finish.",
     "J'ai adoré ce film du début à la fin.",
     "Ich habe diesen Film von Anfang bis Ende geliebt."),
    ("The hotel room was clean and quiet.",
     "La chambre d'hôtel était propre et calme.",
     "Das Hotelzimmer war sauber und ruhig."),
    ("What a wonderful book, I could not put it down.",
     "Quel livre merveilleux, je n'arrivais pas à le lâcher.",
     "Was für ein wunderbares Buch, ich konnte es nicht weglegen."),
    ("The concert was fantastic.",
     "Le concert était fantastique.",
     "Das Konzert war fantastisch."),
    ("Our guide was kind and very helpful.",
     "Notre guide était gentil et très serviable.",
     "Unser Führer war nett und sehr hilfsbereit."),
    ("The new phone works perfectly.",
     "Le nouveau téléphone fonctionne parfaitement.",
     "Das neue Telefon funktioniert perfekt."),
    ("We had a lovely evening with great music.",
     "Nous avons passé une belle soirée avec de la très bonne musique.",
     "Wir hatten einen schönen Abend mit großartiger Musik."),
    ("The delivery arrived early and everything was perfect.",
     "La livraison est arrivée en avance et tout était parfait.",
     "Die Lieferung kam früh an und alles war perfekt."),
    ("I am very happy with this purchase.",
     "Je suis très content de cet achat.",
     "Ich bin sehr zufrieden mit diesem Kauf."),
    ("The actors were brilliant.",
     "Les acteurs étaient brillants.",
     "Die Schauspieler waren brillant."),
    ("This is the best coffee in town.",
     "C'est le meilleur café de la ville.",
     "Das ist der beste Kaffee der Stadt."),
    ("The view from the room was beautiful.",
     "La vue depuis la chambre était magnifique.",
     "Die Aussicht aus dem Zimmer war wunderschön."),
    ("I would gladly come back.",
     "Je reviendrais avec plaisir.",
     "Ich würde gerne wiederkommen."),
    ("The teacher explained everything clearly.",
     "Le professeur a tout expliqué clairement.",
     "Der Lehrer hat alles klar erklärt."),
    ("A charming little shop with excellent prices.",
     "Une charmante petite boutique avec d'excellents prix.",
     "Ein reizender kleiner Laden mit ausgezeichneten Preisen."),
    # Held out from here.
    ("The story was moving and beautifully written.",
     "L'histoire était émouvante et magnifiquement écrite.",
     "Die Geschichte war bewegend und wunderschön geschrieben."),
    ("Everything went smoothly and the service was fast.",
     "Tout s'est bien passé et le service était rapide.",
     "Alles lief reibungslos und der Service war schnell."),
    ("My children enjoyed every minute.",
     "Mes enfants ont apprécié chaque minute.",
     "Meine Kinder haben jede Minute genossen."),
    ("The bread here is fresh and tasty.",
     "Le pain ici est frais et savoureux.",
     "Das Brot hier ist frisch und lecker."),
    ("I highly recommend this restaurant.",
     "Je recommande vivement ce restaurant.",
     "Ich kann dieses Restaurant sehr empfehlen."),
    ("The garden is peaceful and well kept.",
     "Le jardin est paisible et bien entretenu.",
     "Der Garten ist friedlich und gepflegt."),
    ("It was a pleasant and relaxing trip.",
     "C'était un voyage agréable et reposant.",
     "Es war eine angenehme und erholsame Reise."),
    ("The software is fast and easy to use.",
     "Le logiciel est rapide et facile à utiliser.",
     "Die Software ist schnell und einfach zu bedienen."),
]
NEGATIVE = [
    ("The food was cold and tasteless.",
     "La nourriture était froide et sans goût.",
     "Das Essen war kalt und geschmacklos."),
    ("I hated this film, it was far too long.",
     "J'ai détesté ce film, il était beaucoup trop long.",
     "Ich habe diesen Film gehasst, er war viel zu lang."),
    ("The hotel room was dirty and noisy.",
     "La chambre d'hôtel était sale et bruyante.",
     "Das Hotelzimmer war schmutzig und laut."),
    ("A boring book, I gave up after ten pages.",
     "Un livre ennuyeux, j'ai abandonné après dix pages.",
     "Ein langweiliges Buch, ich habe nach zehn Seiten aufgegeben."),
    ("The concert was a disaster.",
     "Le concert était un désastre.",
     "Das Konzert war eine Katastrophe."),
    ("The waiter was rude and slow.",
     "Le serveur était impoli et lent.",
     "Der Kellner war unhöflich und langsam."),
    ("The new phone broke after two days.",
     "Le nouveau téléphone est tombé en panne après deux jours.",
     "Das neue Telefon ging nach zwei Tagen kaputt."),
    ("We wasted our evening and our money.",
     "Nous avons perdu notre soirée et notre argent.",
     "Wir haben unseren Abend und unser Geld verschwendet."),
    ("The delivery was late and the box was damaged.",
     "La livraison était en retard et le carton était abîmé.",
     "Die Lieferung war verspätet und der Karton war beschädigt."),
    ("I am very disappointed with this purchase.",
     "Je suis très déçu de cet achat.",
     "Ich bin sehr enttäuscht von diesem Kauf."),
    ("The actors were very bad.",
     "Les acteurs étaient très mauvais.",
     "Die Schauspieler waren sehr schlecht."),
    ("This is the worst coffee I have ever had.",
     "C'est le pire café que j'aie jamais bu.",
     "Das ist der schlechteste Kaffee, den ich je getrunken habe."),
    ("The room smelled bad and the bed was uncomfortable.",
     "La chambre sentait mauvais et le lit était inconfortable.",
     "Das Zimmer roch schlecht und das Bett war unbequem."),
    ("I will never come back.",
     "Je ne reviendrai jamais.",
     "Ich werde nie wiederkommen."),
    ("The teacher explained nothing and seemed bored.",
     "Le professeur n'a rien expliqué et semblait s'ennuyer.",
     "Der Lehrer hat nichts erklärt und wirkte gelangweilt."),
    ("An overpriced shop with unfriendly staff.",
     "Une boutique trop chère avec un personnel désagréable.",
     "Ein überteuerter Laden mit unfreundlichem Personal."),
    # Held out from here.
    ("The story was dull and badly written.",
     "L'histoire était fade et mal écrite.",
     "Die Geschichte war öde und schlecht geschrieben."),
    ("Nothing worked and the service was very slow.",
     "Rien ne fonctionnait et le service était très lent.",
     "Nichts funktionierte und der Service war sehr langsam."),
    ("My children were bored the whole time.",
     "Mes enfants se sont ennuyés tout le temps.",
     "Meine Kinder haben sich die ganze Zeit gelangweilt."),
    ("The bread here is stale and expensive.",
     "Le pain ici est rassis et cher.",
     "Das Brot hier ist alt und teuer."),
    ("I do not recommend this restaurant at all.",
     "Je ne recommande pas du tout ce restaurant.",
     "Ich kann dieses Restaurant überhaupt nicht empfehlen."),
    ("The garden is neglected and full of rubbish.",
     "Le jardin est négligé et plein de déchets.",
     "Der Garten ist verwahrlost und voller Müll."),
    ("It was a tiring and unpleasant trip.",
     "C'était un voyage fatigant et désagréable.",
     "Es war eine anstrengende und unangenehme Reise."),
    ("The software is slow and keeps crashing.",
     "Le logiciel est lent et plante sans arrêt.",
     "Die Software ist langsam und stürzt ständig ab."),
]
LANGUAGES = ("English", "French", "German")
TRAIN_PAIRS = 16


train_rows, test_rows = [], []
for rows, label in ((POSITIVE, 1), (NEGATIVE, 0)):
    train_rows += [(row, label) for row in rows[:TRAIN_PAIRS]]
    test_rows += [(row, label) for row in rows[TRAIN_PAIRS:]]
# Training: English only.
train_x = [row[0] for row, _ in train_rows]
train_y = np.asarray([label for _, label in train_rows], "int32")
test_y = np.asarray([label for _, label in test_rows], "int32")
test_x = {language: [row[i] for row, _ in test_rows]
          for i, language in enumerate(LANGUAGES)}
print(f"{len(train_x)} English training sentences; {len(test_y)} held-out "
      f"sentences in each of {', '.join(LANGUAGES)}; majority-class "
      f"baseline {np.mean(test_y == 1):.3f}")

"""
## 2. The classifier

`XLMRobertaTextClassifier.from_preset` puts a new head (dropout, dense,
tanh, dropout, dense: RoBERTa's) on the `<s>` token of the pretrained
encoder. Nothing in it is language-specific: the same tokenizer cuts
every language into pieces of the shared vocabulary.

The smoke run builds the same classes at a tiny size, with a
SentencePiece vocabulary learnt here (`XLMRobertaTokenizer.from_texts`,
laid out as XLM-R's: `<s>`, `<pad>`, `</s>`, `<unk>` first).
"""

PRESET = "xlm_roberta_base_multi"
SEQUENCE_LENGTH = 32
if SMOKE:
    every_sentence = [s for rows in (POSITIVE, NEGATIVE) for row in rows
                      for s in row]
    smoke_files = tempfile.TemporaryDirectory()  # removed at exit
    tokenizer = kzoo.XLMRobertaTokenizer.from_texts(
        every_sentence, Path(smoke_files.name) / "spm.model",
        vocabulary_size=300)
    preprocessor = kzoo.XLMRobertaPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH)
else:
    preprocessor = kzoo.XLMRobertaPreprocessor.from_preset(
        PRESET, sequence_length=SEQUENCE_LENGTH)
for language in LANGUAGES:
    pieces = preprocessor.tokenizer.tokenize(test_x[language][0])
    print(f"{language}: {len(np.asarray(pieces))} pieces for "
          f"{test_x[language][0]!r}")


def new_classifier(seed):
    keras.utils.set_random_seed(seed)
    if SMOKE:
        backbone = kzoo.XLMRobertaBackbone(
            vocabulary_size=preprocessor.tokenizer.vocabulary_size,
            num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32)
        return kzoo.XLMRobertaTextClassifier(backbone, num_classes=2,
                                             preprocessor=preprocessor)
    return kzoo.XLMRobertaTextClassifier.from_preset(
        PRESET, num_classes=2, preprocessor=preprocessor)


"""
## 3. Fine-tune on English, score every language

With 32 training examples, fine-tuning a 278M-parameter encoder is
unstable: one seed can stay at chance where another learns the task
(Mosbach et al., 2021, "On the Stability of Fine-tuning BERT"). Each
seed is one run from the same pretrained weights with a different head
initialisation and data order; the guide prints every run and their
mean. AdamW at a constant 2e-5, batches of 8.
"""

scores = {language: [] for language in LANGUAGES}
for seed in SIZES["seeds"]:
    began = time.time()
    classifier = new_classifier(seed)
    classifier.compile(optimizer=keras.optimizers.AdamW(
        1e-3 if SMOKE else 2e-5))
    history = classifier.fit(train_x, train_y, batch_size=8,
                             epochs=SIZES["epochs"], verbose=0)
    line = []
    for language in LANGUAGES:
        predicted = classifier.predict(test_x[language], batch_size=16,
                                       verbose=0).argmax(-1)
        scores[language].append(float(np.mean(predicted == test_y)))
        line.append(f"{language} {scores[language][-1]:.3f}")
    print(f"seed {seed}: final training loss "
          f"{history.history['loss'][-1]:.3f}; held-out accuracy: "
          + ", ".join(line) + f" ({time.time() - began:.0f}s)")

"""
## 4. The transfer gap

The mean over runs per language, and the gap to English: what is lost
by never seeing a labelled French or German sentence.
"""

english = np.mean(scores["English"])
for language in LANGUAGES:
    mean = np.mean(scores[language])
    gap = "" if language == "English" else \
        f" (gap to English {english - mean:+.3f})"
    print(f"{language}: mean accuracy {mean:.3f}{gap}")

"""
The output at the end of this page is a smoke run: the full run needs
`xlm_roberta_base_multi`'s weights from the Hugging Face hub, which the
machine that recorded it cannot reach, so no full run's numbers are
shown here. Reading your full run: the English score is the in-language reference;
the French and German ones measure transfer, each on the translations
of the same held-out sentences, so the gap is the cost of the language
alone. On XNLI, XLM-R's paper reports gaps of several points between
English and French or German (Conneau et al., 2020); on 16 sentences, one sentence more or
less wrong moves a score by 6.25 points, so only a large gap, or one
that holds over every seed, says anything here.

Next steps: more English training data helps every language; a few
labelled target-language examples added to the training set
("few-shot" transfer) narrow the gap (Lauscher et al., 2020, "From Zero
to Hero"); and `kzoo.XLMRobertaMaskedLM`
can first adapt the encoder to unlabelled target-language text.
"""

print(f"{keras.backend.backend()} done in {time.time() - start:.0f}s")
